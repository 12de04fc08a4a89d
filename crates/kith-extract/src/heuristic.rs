//! heuristic (in progress)
