//! stub
pub async fn page() -> &'static str {
    ""
}
pub async fn undo() -> &'static str {
    ""
}
