//! A small builder for `SELECT … WHERE … AND …` with bound parameters, so
//! every filter is one line and no value is ever spliced into SQL text.

use rusqlite::types::Value as SqlValue;

/// SQL text and its parameters, grown one condition at a time.
pub struct Select {
    sql: String,
    args: Vec<SqlValue>,
}

impl Select {
    /// Starts from `sql` (which ends in a `WHERE` clause) and its parameters.
    pub fn new(sql: impl Into<String>, args: Vec<SqlValue>) -> Self {
        Select {
            sql: sql.into(),
            args,
        }
    }

    /// `AND column = value`, when there is a value.
    pub fn eq(&mut self, column: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.sql.push_str(&format!(" AND {column} = ?"));
            self.args.push(SqlValue::Text(v.to_string()));
        }
        self
    }

    /// `AND column IN (values…)`, when there are values.
    pub fn any<'a>(&mut self, column: &str, values: impl Iterator<Item = &'a str>) -> &mut Self {
        let values: Vec<&str> = values.collect();
        if !values.is_empty() {
            let marks = vec!["?"; values.len()].join(", ");
            self.sql.push_str(&format!(" AND {column} IN ({marks})"));
            self.args
                .extend(values.into_iter().map(|v| SqlValue::Text(v.to_string())));
        }
        self
    }

    /// `AND {condition}`, where `condition` holds one `?` for the integer
    /// (e.g. `"n.effective_ms >= ?"`), when there is one.
    pub fn int(&mut self, condition: &str, value: Option<i64>) -> &mut Self {
        if let Some(v) = value {
            self.sql.push_str(&format!(" AND {condition}"));
            self.args.push(SqlValue::Integer(v));
        }
        self
    }

    /// `AND {condition}`, where `condition` holds one `?` for the text.
    pub fn text(&mut self, condition: &str, value: &str) -> &mut Self {
        self.sql.push_str(&format!(" AND {condition}"));
        self.args.push(SqlValue::Text(value.to_string()));
        self
    }

    /// `AND {condition}` with its own parameters, in order.
    pub fn raw(&mut self, condition: &str, values: Vec<SqlValue>) -> &mut Self {
        self.sql.push_str(&format!(" AND {condition}"));
        self.args.extend(values);
        self
    }

    /// The SQL and parameters as they stand (for use as a subquery).
    pub fn into_parts(self) -> (String, Vec<SqlValue>) {
        (self.sql, self.args)
    }

    /// Appends `ORDER BY {order} LIMIT ?` (0 means no limit) and returns the
    /// finished SQL and parameters.
    pub fn finish(mut self, order: &str, limit: usize) -> (String, Vec<SqlValue>) {
        self.sql.push_str(&format!(" ORDER BY {order} LIMIT ?"));
        let limit = if limit == 0 { i64::MAX } else { limit as i64 };
        self.args.push(SqlValue::Integer(limit));
        (self.sql, self.args)
    }
}
