//! POSTGRESQL-ONLY TESTS: not part of the backend-neutral conformance suite.
