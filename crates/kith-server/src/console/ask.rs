//! stub
pub async fn form() -> &'static str {
    ""
}
pub async fn submit() -> &'static str {
    ""
}
