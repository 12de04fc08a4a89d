//! kith-store
