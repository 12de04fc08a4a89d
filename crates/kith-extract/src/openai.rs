//! openai (in progress)
