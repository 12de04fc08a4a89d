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

    /// Appends `ORDER BY {order} LIMIT n` (0 means no limit) and returns the
    /// finished SQL and parameters.
    pub fn finish(mut self, order: &str, limit: usize) -> (String, Vec<Arg>) {
        let limit = if limit == 0 { i64::MAX } else { limit as i64 };
        let p = self.arg(limit);
        self.sql.push_str(&format!(" ORDER BY {order} LIMIT {p}"));
        (self.sql, self.args)
    }
}

/// Borrows owned arguments the way the driver takes them.
pub fn refs(args: &[Arg]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect()
}
