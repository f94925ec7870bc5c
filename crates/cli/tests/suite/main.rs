//! The tests of the real `ragdown` binary, in one test binary (one link on a 2-core machine
//! instead of eight): the CLI, crash safety, converted formats, HTTP, interoperability with the
//! Python MCP SDK, the mcp-local-rag commands, records in PostgreSQL, the primary and its readers, stdio MCP, and the
//! web UI in a real browser. What
//! they share is in [`harness`]. The retrieval-quality tests (`tests/quality.rs`) stay a binary
//! of their own: they take minutes with the real model and run apart.

mod harness;

mod cli;
mod crash;
mod formats;
mod hardening;
mod http;
mod interop;
mod layout;
mod local_rag;
mod postgres;
mod primary;
mod stdio;
mod ui;
