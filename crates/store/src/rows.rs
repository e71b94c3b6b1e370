//! Rows read into structs by column name (serde_rusqlite): the struct's fields are the one list
//! of what a row holds, instead of a second list of `r.get(0)?, r.get(1)?…` kept in step by hand
//! beside every SELECT.

use rusqlite::{Connection, Params, Row};
use serde::de::DeserializeOwned;

/// A value that does not fit its field, as rusqlite's conversion error (the message names the
/// column).
fn sqlite_error(e: serde_rusqlite::Error) -> rusqlite::Error {
    match e {
        serde_rusqlite::Error::Rusqlite(e) => e,
        other => rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Null,
            Box::new(other),
        ),
    }
}

/// One row as `T`, its fields matched to the columns by name (`AS` renames a column; columns no
/// field names are left out). Reads the column names for this row: in a loop over many rows,
/// [`all_rows`] reads them once.
pub fn from_row<T: DeserializeOwned>(row: &Row<'_>) -> rusqlite::Result<T> {
    serde_rusqlite::from_row(row).map_err(sqlite_error)
}

/// Every row `sql` selects with `params`, each as `T` (a cached statement).
pub fn all_rows<T: DeserializeOwned>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    each_row(stmt.query(params)?).collect()
}

/// The rows of a query, each as `T` (the column names read once).
pub fn each_row<T: DeserializeOwned>(
    rows: rusqlite::Rows<'_>,
) -> impl Iterator<Item = rusqlite::Result<T>> {
    serde_rusqlite::from_rows(rows).map(|row| row.map_err(sqlite_error))
}

/// The one row `sql` selects, as `T`; `None` when it selects none.
pub fn one_row<T: DeserializeOwned>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
) -> rusqlite::Result<Option<T>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(sql)?
        .query_row(params, from_row)
        .optional()
}

/// A column that holds JSON text, read as the value it encodes
/// (`#[serde(deserialize_with = "cowork_store::json_text")]`); text that does not parse reads
/// as the type's default, as a list column that was never written does.
pub fn json_text<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let text = <Option<String> as serde::Deserialize>::deserialize(deserializer)?;
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum State {
        Queued,
        Sent,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Item {
        id: i64,
        name: String,
        note: Option<String>,
        done: bool,
        state: State,
    }

    #[test]
    fn rows_read_by_column_name_and_a_bad_value_names_its_column() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (id INTEGER, name TEXT, note TEXT, done INTEGER, state TEXT);
             INSERT INTO t VALUES (1, 'a', NULL, 0, 'queued'), (2, 'b', 'x', 1, 'sent');",
        )
        .unwrap();
        // Columns in another order than the fields: matched by name.
        let items: Vec<Item> = all_rows(
            &conn,
            "SELECT state, done, note, name, id FROM t ORDER BY id",
            [],
        )
        .unwrap();
        assert_eq!(
            items[1],
            Item {
                id: 2,
                name: "b".into(),
                note: Some("x".into()),
                done: true,
                state: State::Sent
            }
        );
        assert_eq!(items[0].note, None);
        let none: Option<Item> = one_row(&conn, "SELECT * FROM t WHERE id = 9", []).unwrap();
        assert!(none.is_none());
        let bad = one_row::<Item>(
            &conn,
            "SELECT id, name, note, done, 'lost' AS state FROM t",
            [],
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("state"), "{bad}");
    }
}
