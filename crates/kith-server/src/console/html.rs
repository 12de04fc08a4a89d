//! Building HTML safely: every piece of memory text is hostile input (a
//! message may hold `<script>`), so text only ever reaches a page through
//! [`esc`], and pages share one [`layout`].

use std::fmt::Write;

use kith::Timestamp;
use uuid::Uuid;

/// `text` with `& < > " '` replaced by entities: safe inside an element
/// and inside a double- or single-quoted attribute.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link to a session's timeline, its name escaped.
pub fn session_link(session: &str) -> String {
    format!(
        r#"<a href="/ui/conversation?session={}">{}</a>"#,
        esc(&url_value(session)),
        esc(session)
    )
}

/// `text` as one URL query value (percent-encoded; then escaped by the
/// caller's [`esc`] like any attribute).
pub fn url_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A time as people read it: `2025-03-04 19:02` in the time's own offset.
pub fn when(t: &Timestamp) -> String {
    t.short()
}

/// A time or a dash.
pub fn when_opt(t: Option<&Timestamp>) -> String {
    t.map(when).unwrap_or_else(|| "—".into())
}

/// The first 8 characters of an id, for display (the full id is in the
/// link and the `title`).
pub fn short(id: &Uuid) -> String {
    id.to_string()[..8].to_string()
}

/// At most `max` characters of `text`, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A hidden field carrying the session's CSRF token; every form that
/// changes something has one.
pub fn csrf_field(token: &str) -> String {
    format!(
        r#"<input type="hidden" name="csrf" value="{}">"#,
        esc(token)
    )
}

/// The console's pages, for the navigation bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// `/ui`
    Overview,
    /// `/ui/conversation`
    Conversation,
    /// `/ui/ask`
    Ask,
    /// `/ui/entities`
    Entities,
    /// `/ui/inbox`
    Inbox,
    /// `/ui/journal`
    Journal,
    /// A page outside the bar (login, errors).
    None,
}

const NAV: [(Nav, &str, &str); 6] = [
    (Nav::Overview, "/ui", "Overview"),
    (Nav::Conversation, "/ui/conversation", "Conversation"),
    (Nav::Ask, "/ui/ask", "Ask"),
    (Nav::Entities, "/ui/entities", "People and things"),
    (Nav::Inbox, "/ui/inbox", "Inbox"),
    (Nav::Journal, "/ui/journal", "Journal"),
];

/// Who is looking, for the page chrome: the owner and the CSRF token of
/// the logout form.
pub struct Chrome<'a> {
    /// The logged-in owner.
    pub owner: &'a str,
    /// The session's CSRF token.
    pub csrf: &'a str,
}

/// A whole page: head, navigation (with the owner and a logout button
/// when someone is logged in), a heading and `body` (already HTML).
pub fn layout(title: &str, nav: Nav, chrome: Option<&Chrome<'_>>, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 2048);
    let _ = write!(
        out,
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{} · kith</title>
<link rel="stylesheet" href="/ui/assets/console.css">
<script src="/ui/assets/console.js" defer></script>
</head><body>
<header><a class="brand" href="/ui">kith</a><nav>"#,
        esc(title)
    );
    if let Some(chrome) = chrome {
        for (page, href, label) in NAV {
            let current = if page == nav {
                r#" aria-current="page""#
            } else {
                ""
            };
            let _ = write!(out, r#"<a href="{href}"{current}>{label}</a>"#);
        }
        let _ = write!(
            out,
            r#"</nav><form class="logout" method="post" action="/ui/logout">{}<span class="owner" id="owner">{}</span> <button type="submit">Log out</button></form>"#,
            csrf_field(chrome.csrf),
            esc(chrome.owner)
        );
    } else {
        out.push_str("</nav>");
    }
    let _ = write!(out, "</header>\n<main>\n<h1>{}</h1>\n", esc(title));
    out.push_str(body);
    out.push_str("\n</main></body></html>\n");
    out
}

/// A "next page" link when there is one (`href` is built by the caller
/// from escaped parts).
pub fn next_link(href: Option<String>) -> String {
    match href {
        Some(h) => format!(
            r#"<p class="pager"><a rel="next" href="{}">Next page →</a></p>"#,
            esc(&h)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esc_neutralises_markup_in_text_and_attributes() {
        let cases = [
            (
                "<script>alert(1)</script>",
                "&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            (r#"" onmouseover="x"#, "&quot; onmouseover=&quot;x"),
            ("it's & done", "it&#39;s &amp; done"),
            ("plain", "plain"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(esc(input), want, "{input:?}");
        }
    }

    #[test]
    fn url_values_are_percent_encoded() {
        assert_eq!(url_value("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(url_value("s-1_x.y~"), "s-1_x.y~");
    }

    #[test]
    fn clip_cuts_on_characters() {
        assert_eq!(clip("héllo", 3), "hél…");
        assert_eq!(clip("héllo", 5), "héllo");
    }

    #[test]
    fn layout_escapes_the_title_and_owner() {
        let chrome = Chrome {
            owner: "<b>",
            csrf: "t\"",
        };
        let page = layout("<i>", Nav::Overview, Some(&chrome), "");
        assert!(page.contains("<h1>&lt;i&gt;</h1>"), "{page}");
        assert!(
            page.contains("&lt;b&gt;") && !page.contains("<b>"),
            "{page}"
        );
        assert!(page.contains(r#"value="t&quot;""#), "{page}");
    }
}
