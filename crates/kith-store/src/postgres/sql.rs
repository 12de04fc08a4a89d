//! A small builder for `SELECT … WHERE … AND …` with numbered parameters
//! (`$1`, `$2`, …), so every filter is one line and no value is ever spliced
//! into SQL text.

use postgres::types::ToSql;

/// One bound parameter, owned so a query can be built in steps.
pub type Arg = Box<dyn ToSql + Sync + Send>;

/// SQL text and its parameters, grown one condition at a time.
pub struct Select {
    sql: String,
    args: Vec<Arg>,
}

impl Select {
    /// Starts from `sql`, which ends in a `WHERE` clause and refers to
    /// parameters added with [`Select::arg`] before any condition.
    pub fn new(sql: impl Into<String>) -> Self {
        Select {
            sql: sql.into(),
            args: Vec::new(),
        }
    }

    /// Binds `value` and returns its placeholder (`$n`).
    pub fn arg(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.args.push(Box::new(value));
        format!("${}", self.args.len())
    }

    /// Appends `AND {condition}`.
    pub fn and(&mut self, condition: &str) -> &mut Self {
        self.sql.push_str(" AND ");
        self.sql.push_str(condition);
        self
    }

    /// Appends text as is (the initial `WHERE` clause, joins).
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.sql.push_str(text);
        self
    }

    /// `AND column = value`, when there is a value.
    pub fn eq(&mut self, column: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            let p = self.arg(v.to_string());
            self.and(&format!("{column} = {p}"));
        }
        self
    }

    /// `AND column = ANY(values)`, when there are values.
    pub fn any<'a>(&mut self, column: &str, values: impl Iterator<Item = &'a str>) -> &mut Self {
        let values: Vec<String> = values.map(str::to_string).collect();
        if !values.is_empty() {
            let p = self.arg(values);
            self.and(&format!("{column} = ANY({p})"));
        }
        self
    }

    /// `AND {column} {op} value` for an integer, when there is one.
    pub fn int(&mut self, column_op: &str, value: Option<i64>) -> &mut Self {
        if let Some(v) = value {
            let p = self.arg(v);
            self.and(&format!("{column_op} {p}"));
        }
        self
    }

    /// Appends `ORDER BY {order} LIMIT n` (0: no `LIMIT` at all) and returns
    /// the finished SQL and parameters.
    ///
    /// Never `LIMIT $n` for "no limit": once a prepared statement gets a
    /// generic plan, the planner cannot see the value and, expecting few
    /// rows, walks the `ORDER BY` column's index and filters every row
    /// (measured: a 36-id lookup took 9 ms at 10k nodes instead of 0.1 ms).
    pub fn finish(mut self, order: &str, limit: usize) -> (String, Vec<Arg>) {
        self.sql.push_str(&format!(" ORDER BY {order}"));
        if limit > 0 {
            let p = self.arg(limit as i64);
            self.sql.push_str(&format!(" LIMIT {p}"));
        }
        (self.sql, self.args)
    }

    /// The SQL and parameters as they are, unordered and unlimited.
    pub fn into_parts(self) -> (String, Vec<Arg>) {
        (self.sql, self.args)
    }
}

/// `text` as an SQL string literal, for the few statements that travel in
/// the simple protocol (which has no parameters) beside another: an
/// escape string (`E'…'`, read the same whatever
/// `standard_conforming_strings` says) with `\` and `'` escaped. PostgreSQL
/// text holds no NUL, and kith's values have none (JSON escapes them).
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str("E'");
    for c in text.chars() {
        if c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Borrows owned arguments the way the driver takes them.
pub fn refs(args: &[Arg]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal("plain"), "E'plain'");
        assert_eq!(literal("it's"), r"E'it\'s'");
        assert_eq!(literal(r"a\b"), r"E'a\\b'");
        assert_eq!(
            literal(r"\'; DROP TABLE x; --"),
            r"E'\\\'; DROP TABLE x; --'"
        );
    }

    #[test]
    fn no_limit_is_no_limit_clause_not_a_parameter() {
        let mut s = Select::new("SELECT 1 FROM t WHERE true");
        s.eq("a", Some("x"));
        let (sql, args) = s.finish("seq", 0);
        assert_eq!(sql, "SELECT 1 FROM t WHERE true AND a = $1 ORDER BY seq");
        assert_eq!(args.len(), 1);
        let (sql, args) = Select::new("SELECT 1 FROM t WHERE true").finish("seq", 5);
        assert_eq!(sql, "SELECT 1 FROM t WHERE true ORDER BY seq LIMIT $1");
        assert_eq!(args.len(), 1);
    }
}
