//! Text out of documents, for the model to read: a PDF's text layer and a Word document's
//! paragraphs. Shared by the families that meet documents (a PDF on the web, a file the person
//! attaches), so it sits below them.

use std::io::Read;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DocumentText {
    pub title: Option<String>,
    /// Paragraphs (PDF: pages) separated by a blank line.
    pub text: String,
}

#[derive(Debug, Error, PartialEq)]
pub enum DocumentError {
    #[error("the {kind} could not be read ({reason})")]
    Unreadable { kind: &'static str, reason: String },
    #[error("the PDF is encrypted — open it, save an unprotected copy and attach that")]
    Encrypted,
    #[error("the {kind} has no text layer (a scan?) — nothing to read")]
    NoText { kind: &'static str },
}

/// A PDF's text (lopdf: each page's text in content order — words whole where layout-driven
/// extractors split kerned glyph runs), pages separated by a blank line.
pub fn pdf(bytes: &[u8]) -> Result<DocumentText, DocumentError> {
    let document = lopdf::Document::load_mem(bytes).map_err(|e| DocumentError::Unreadable {
        kind: "PDF",
        reason: e.to_string(),
    })?;
    if document.is_encrypted() {
        return Err(DocumentError::Encrypted);
    }
    let mut text = String::new();
    for number in document.get_pages().keys() {
        let page = document.extract_text(&[*number]).unwrap_or_default();
        let page = page.trim();
        if !page.is_empty() {
            text.push_str(page);
            text.push_str("\n\n");
        }
    }
    if text.trim().is_empty() {
        return Err(DocumentError::NoText { kind: "PDF" });
    }
    let title = document
        .trailer
        .get(b"Info")
        .and_then(|info| document.dereference(info))
        .ok()
        .and_then(|(_, info)| info.as_dict().ok()?.get(b"Title").ok().cloned())
        .and_then(|title| lopdf::decode_text_string(&title).ok())
        .filter(|t| !t.trim().is_empty());
    Ok(DocumentText {
        title,
        text: text.trim_end().to_string(),
    })
}

/// The most bytes of `word/document.xml` read: a zip bomb stops here.
const DOCX_XML_MAX: u64 = 64 * 1024 * 1024;

/// A Word document's text: `word/document.xml`'s paragraphs, with tabs and line breaks. (No
/// crate reads .docx text without pulling a whole document model; the text is a handful of
/// elements.)
pub fn docx(bytes: &[u8]) -> Result<DocumentText, DocumentError> {
    use quick_xml::events::Event;
    let unreadable = |reason: String| DocumentError::Unreadable {
        kind: "Word document",
        reason,
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| unreadable(format!("not a .docx (zip) file: {e}")))?;
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .map_err(|e| unreadable(format!("no word/document.xml: {e}")))?
        .take(DOCX_XML_MAX)
        .read_to_string(&mut xml)
        .map_err(|e| unreadable(e.to_string()))?;
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut text = String::new();
    let mut paragraph = String::new();
    let mut in_text = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if e.local_name().as_ref() == "t" => in_text = true,
            Ok(Event::End(e)) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    let line = paragraph.trim_end();
                    if !line.is_empty() {
                        text.push_str(line);
                        text.push_str("\n\n");
                    }
                    paragraph.clear();
                }
                _ => {}
            },
            Ok(Event::Empty(e)) => match e.local_name().as_ref() {
                "tab" => paragraph.push('\t'),
                "br" | "cr" => paragraph.push('\n'),
                _ => {}
            },
            Ok(Event::Text(t)) if in_text => {
                paragraph.push_str(&t.xml10_content());
            }
            Ok(Event::GeneralRef(r)) if in_text => {
                // Entities (&amp; &#x4e2d; …) arrive apart from the text around them.
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    paragraph.push(c);
                } else {
                    paragraph.push_str(match &*r {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Ok(Event::Eof) => break,
            Err(e) => return Err(unreadable(e.to_string())),
            _ => {}
        }
    }
    if text.trim().is_empty() {
        return Err(DocumentError::NoText {
            kind: "Word document",
        });
    }
    Ok(DocumentText {
        title: None,
        text: text.trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    fn docx_of(body: &str) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        zip.start_file::<_, ()>("word/document.xml", Default::default())
            .unwrap();
        write!(zip, r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#).unwrap();
        zip.finish().unwrap();
        out.into_inner()
    }

    #[test]
    fn a_docx_reads_as_its_paragraphs() {
        let bytes = docx_of(
            r#"<w:p><w:r><w:t>Quarterly plan</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Milk &amp; bread </w:t></w:r><w:r><w:tab/><w:t>周一</w:t></w:r></w:p><w:p/>"#,
        );
        let doc = super::docx(&bytes).unwrap();
        assert_eq!(doc.text, "Quarterly plan\n\nMilk & bread \t周一");
    }

    /// A one-page PDF with `text` in Courier, as lopdf writes one.
    fn pdf_of(text: &str) -> Vec<u8> {
        use lopdf::content::{Content, Operation};
        use lopdf::{Document, Object, Stream, dictionary};
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier",
        });
        let resources_id =
            doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(text)]),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
                "Resources" => resources_id,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_pdf_reads_as_its_text() {
        let doc = super::pdf(&pdf_of("Quarterly plan: ship in May")).unwrap();
        assert!(
            doc.text.contains("Quarterly plan: ship in May"),
            "{:?}",
            doc.text
        );
    }

    #[test]
    fn bad_documents_say_what_is_wrong() {
        assert!(matches!(
            super::docx(b"not a zip"),
            Err(super::DocumentError::Unreadable { .. })
        ));
        assert_eq!(
            super::docx(&docx_of("<w:p/>")),
            Err(super::DocumentError::NoText {
                kind: "Word document"
            })
        );
        assert!(super::pdf(b"%PDF-1.4 broken").is_err());
    }
}
