//! stub
pub async fn list() -> &'static str {
    ""
}
pub async fn node() -> &'static str {
    ""
}
