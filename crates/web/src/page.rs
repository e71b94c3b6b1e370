//! Fetched bytes → text a model can read: the charset found (header, byte-order mark, `<meta>`,
//! else guessed from the bytes — GBK, Big5 and Shift-JIS pages come out right), the page's main
//! content picked out (dom_smoothie, a port of Firefox's Reader View) and written as Markdown
//! (htmd), with its title, byline and date.

use encoding_rs::Encoding;
use serde::Serialize;

/// A page as read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Page {
    pub title: Option<String>,
    pub byline: Option<String>,
    pub published: Option<String>,
    pub site: Option<String>,
    /// The charset the bytes were read in.
    pub charset: String,
    pub markdown: String,
}

/// The charset named by a Content-Type value.
fn charset_param(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        (key.trim().eq_ignore_ascii_case("charset"))
            .then(|| Encoding::for_label(value.trim().trim_matches('"').as_bytes()))
            .flatten()
    })
}

/// `<meta charset=…>` or `<meta http-equiv=Content-Type content="…; charset=…">` in the first
/// 2 KB (where HTML requires it).
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
    let at = head.find("charset=")?;
    let rest = head[at + 8..].trim_start_matches(['"', '\'']);
    let label: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    Encoding::for_label(label.as_bytes())
}

/// The bytes as text, and the charset used.
pub fn decode(bytes: &[u8], content_type: Option<&str>) -> (String, &'static str) {
    let declared = content_type
        .and_then(charset_param)
        .or_else(|| Encoding::for_bom(bytes).map(|(e, _)| e))
        .or_else(|| meta_charset(bytes));
    let encoding = declared.unwrap_or_else(|| {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(bytes, true);
        detector.guess(None, chardetng::Utf8Detection::Allow)
    });
    let (text, used, _) = encoding.decode(bytes);
    (text.into_owned(), used.name())
}

fn is_html(content_type: Option<&str>, text: &str) -> bool {
    match content_type.map(|c| c.to_ascii_lowercase()) {
        Some(c) if c.contains("html") => true,
        Some(c) if c.starts_with("text/") || c.contains("json") || c.contains("xml") => false,
        _ => {
            let start = text
                .trim_start()
                .get(..64)
                .unwrap_or("")
                .to_ascii_lowercase();
            start.starts_with("<!doctype html") || start.starts_with("<html")
        }
    }
}

/// Reads a fetched body. `selector` (CSS) keeps only what it matches.
pub fn read(
    bytes: &[u8],
    content_type: Option<&str>,
    url: &str,
    selector: Option<&str>,
) -> Result<Page, String> {
    let (text, charset) = decode(bytes, content_type);
    let charset = charset.to_string();
    if !is_html(content_type, &text) {
        return Ok(Page {
            charset,
            markdown: text,
            ..Page::default()
        });
    }
    if let Some(selector) = selector {
        let document = dom_query::Document::from(text.as_str());
        let found = document.select(selector);
        if !found.exists() {
            return Err(format!(
                "nothing on the page matches the selector {selector:?}"
            ));
        }
        let markdown = htmd::convert(&found.html()).map_err(|e| e.to_string())?;
        return Ok(Page {
            title: Some(document.select("title").text().trim().to_string())
                .filter(|t| !t.is_empty()),
            charset,
            markdown,
            ..Page::default()
        });
    }
    let article = dom_smoothie::Readability::new(text.as_str(), Some(url), None)
        .ok()
        .and_then(|mut r| r.parse().ok());
    match article {
        Some(article) if article.length > 140 => Ok(Page {
            title: Some(article.title).filter(|t| !t.trim().is_empty()),
            byline: article.byline,
            published: article.published_time,
            site: article.site_name,
            charset,
            markdown: htmd::convert(&article.content).map_err(|e| e.to_string())?,
        }),
        // Not an article (a listing, a form, a tiny page): the whole body.
        _ => {
            let document = dom_query::Document::from(text.as_str());
            document
                .select("script, style, noscript, template")
                .remove();
            let body = document.select("body");
            let html = if body.exists() {
                body.html()
            } else {
                document.html()
            };
            Ok(Page {
                title: Some(document.select("title").text().trim().to_string())
                    .filter(|t| !t.is_empty()),
                charset,
                markdown: htmd::convert(&html).map_err(|e| e.to_string())?,
                ..Page::default()
            })
        }
    }
}

/// A PDF's text (see `cowork_documents::pdf`), titled by its metadata or first line.
pub fn read_pdf(bytes: &[u8], url: &str) -> Result<Page, String> {
    let document = cowork_documents::pdf(bytes).map_err(|e| format!("{url}: {e}"))?;
    let title = document.title.or_else(|| {
        document
            .text
            .lines()
            .next()
            .map(|l| l.chars().take(200).collect())
    });
    Ok(Page {
        title,
        charset: "pdf".into(),
        markdown: document.text,
        ..Page::default()
    })
}

/// At most `limit` characters of `markdown`, chosen for `prompt`: the blocks (paragraphs, table
/// rows…) sharing the most words with it, kept in page order. Chinese text has no spaces, so its
/// words are taken as character pairs.
pub fn focus(markdown: &str, prompt: &str, limit: usize) -> String {
    fn terms(text: &str) -> std::collections::HashSet<String> {
        let lower = text.to_lowercase();
        let mut set: std::collections::HashSet<String> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() > 2 && w.is_ascii())
            .map(str::to_string)
            .collect();
        let han: Vec<char> = lower
            .chars()
            .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
            .collect();
        set.extend(han.windows(2).map(|w| w.iter().collect::<String>()));
        set
    }
    let wanted = terms(prompt);
    let blocks: Vec<&str> = markdown.split("\n\n").collect();
    let mut ranked: Vec<(usize, usize)> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (terms(b).intersection(&wanted).count(), i))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen = Vec::new();
    let mut used = 0;
    for (score, i) in ranked {
        let size = blocks[i].chars().count() + 2;
        if score == 0 && !chosen.is_empty() {
            break;
        }
        if used + size <= limit {
            chosen.push(i);
            used += size;
        }
    }
    chosen.sort_unstable();
    let kept: Vec<&str> = chosen.iter().map(|&i| blocks[i]).collect();
    let mut text = kept.join("\n\n[…]\n\n");
    if text.is_empty() {
        text = markdown.chars().take(limit).collect();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_keeps_the_parts_that_mention_it() {
        let page = format!(
            "{}\n\nThe opening hours are 9 to 17 on weekdays.\n\n{}\n\n营业时间：周末十点到四点。",
            "Filler about history. ".repeat(40),
            "More filler text. ".repeat(40)
        );
        let kept = focus(&page, "opening hours", 200);
        assert!(kept.contains("9 to 17"), "{kept}");
        assert!(kept.chars().count() <= 200 + 10);
        assert!(focus(&page, "营业时间", 100).contains("周末"));
    }

    #[test]
    fn charsets_come_from_the_header_the_page_or_the_bytes() {
        let (gbk, _, _) =
            encoding_rs::GBK.encode("今天的天气很好，我们去公园散步吧。北京市气象台发布预报。");
        let (text, used) = decode(&gbk, Some("text/html; charset=gbk"));
        assert!(text.contains("天气很好"), "{text}");
        assert_eq!(used, "GBK");
        let mut page = b"<html><head><meta charset=\"gbk\"></head><body>".to_vec();
        page.extend_from_slice(&gbk);
        assert!(decode(&page, Some("text/html")).0.contains("公园散步"));
        // Nothing declared: guessed from the bytes.
        let (guessed, used) = decode(&gbk, None);
        assert!(guessed.contains("气象台"), "{used}: {guessed}");
        let (sjis, _, _) =
            encoding_rs::SHIFT_JIS.encode("東京の天気は晴れです。明日は雨が降るでしょう。");
        assert!(decode(&sjis, None).0.contains("天気は晴れ"));
    }

    #[test]
    fn an_article_becomes_markdown_with_its_title_and_links() {
        let html = r#"<html><head><title>Rust 2026 | The Blog</title></head><body>
            <nav><a href="/">Home</a> <a href="/about">About</a></nav>
            <article><h1>Rust 2026</h1><p class="byline">By Ada Lovelace</p>
            <p>The new edition brings faster builds and better error messages to everyone who writes Rust every day.</p>
            <p>Read the <a href="/notes">release notes</a> for the whole list of changes, and the migration guide.</p>
            <table><tr><th>Version</th><th>Date</th></tr><tr><td>1.95</td><td>2026-10</td></tr></table>
            </article><footer>© The Blog</footer></body></html>"#;
        let page = read(
            html.as_bytes(),
            Some("text/html"),
            "https://blog.example.org/rust",
            None,
        )
        .unwrap();
        assert!(page.markdown.contains("faster builds"), "{}", page.markdown);
        assert!(
            page.markdown.contains("(https://blog.example.org/notes)"),
            "{}",
            page.markdown
        );
        assert!(!page.markdown.contains("© The Blog"), "{}", page.markdown);
        assert!(page.title.unwrap().contains("Rust 2026"));
        let only = read(
            html.as_bytes(),
            Some("text/html"),
            "https://blog.example.org/rust",
            Some("table"),
        )
        .unwrap();
        assert!(
            only.markdown.contains("1.95") && !only.markdown.contains("faster builds"),
            "{}",
            only.markdown
        );
    }
}
