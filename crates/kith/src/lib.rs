//! kith
