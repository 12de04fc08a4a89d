//! stub
pub async fn page() -> &'static str {
    ""
}
pub async fn review() -> &'static str {
    ""
}
