//! The rules [`crate::guard`] enforces on every request, as plain data and pure functions:
//! which hosts and origins are answered ([`SitePolicy`]), what a JSON content type is, and how
//! many body bytes may be held at once ([`BodyBudget`]). Knows nothing of requests' routes,
//! the server's state, folders or tools.

use std::net::IpAddr;

/// Largest JSON body.
pub const MAX_BODY: usize = 1024 * 1024;
/// Largest upload or move body.
pub const MAX_UPLOAD: usize = 4 * 1024 * 1024;

/// The most bytes of request bodies held at once, all connections together: four uploads of
/// the largest size. Each body holds its announced length (a chunked one, the largest upload)
/// from before it is read until its answer is sent.
pub const BODIES_IN_FLIGHT: usize = 4 * MAX_UPLOAD;

/// The semaphore behind [`BODIES_IN_FLIGHT`], in KiB permits.
pub struct BodyBudget(pub(crate) tokio::sync::Semaphore);

impl Default for BodyBudget {
    fn default() -> Self {
        Self(tokio::sync::Semaphore::new(BODIES_IN_FLIGHT / 1024))
    }
}

/// The cross-site policy: names beyond IP addresses and `localhost`, and foreign origins.
#[derive(Debug, Clone, Default)]
pub struct SitePolicy {
    /// Lower-case host names (no port) also answered; `*` answers any.
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`, lower case, no trailing slash) also allowed; `*` any.
    pub allowed_origins: Vec<String>,
}

impl SitePolicy {
    /// From the comma-separated lists of `RAGDOWN_ALLOWED_HOSTS` and `RAGDOWN_ALLOWED_ORIGINS`.
    pub fn from_lists(hosts: Option<&str>, origins: Option<&str>) -> Self {
        let split = |list: Option<&str>| -> Vec<String> {
            list.unwrap_or_default()
                .split(',')
                .map(|s| s.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Self {
            allowed_hosts: split(hosts),
            allowed_origins: split(origins),
        }
    }

    /// Whether a `Host` header value (`name[:port]`, `[v6]:port`) is one this server answers.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        if name.parse::<IpAddr>().is_ok() {
            // An address cannot be re-pointed: only names can be rebound.
            return true;
        }
        name == "localhost"
            || name.ends_with(".localhost")
            || self
                .allowed_hosts
                .iter()
                .any(|h| h == "*" || *h == name || host_name(h) == name)
    }

    /// Whether a browser's `Origin` may talk to the server reached as `host`.
    pub fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self
            .allowed_origins
            .iter()
            .any(|o| o == "*" || *o == origin)
        {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false; // "null" (sandboxed frames, file://) and the like
        };
        let same_authority = host.is_some_and(|h| h.eq_ignore_ascii_case(authority));
        same_authority && matches!(scheme, "http" | "https")
    }
}

/// The name of a `Host` value: `[::1]:3000` → `::1`, `a.b:80` → `a.b`.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        // One colon: a port. More: a bare IPv6 address.
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

/// Whether a `Content-Type` value is JSON (`application/json`, parameters allowed).
pub fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_by_address_localhost_or_list() {
        let none = SitePolicy::default();
        for ok in [
            "127.0.0.1:3000",
            "localhost:3000",
            "LOCALHOST",
            "app.localhost:8080",
            "[::1]:3000",
            "192.168.1.20",
            "::1",
        ] {
            assert!(none.host_allowed(ok), "{ok}");
        }
        for refused in [
            "evil.example",
            "evil.example:3000",
            "localhost.evil.example",
        ] {
            assert!(!none.host_allowed(refused), "{refused}");
        }
        let listed = SitePolicy::from_lists(Some("kb.example.com, Other.Example:443"), None);
        assert!(listed.host_allowed("kb.example.com:3000"));
        assert!(listed.host_allowed("other.example"));
        assert!(!listed.host_allowed("evil.example"));
        assert!(SitePolicy::from_lists(Some("*"), None).host_allowed("anything.example"));
    }

    #[test]
    fn origins_same_as_host_or_listed() {
        let none = SitePolicy::default();
        assert!(none.origin_allowed("http://127.0.0.1:3000", Some("127.0.0.1:3000")));
        assert!(none.origin_allowed("https://LOCALHOST:3000/", Some("localhost:3000")));
        assert!(!none.origin_allowed("http://127.0.0.1:4000", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("http://evil.example", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("null", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("http://127.0.0.1:3000", None));
        let listed = SitePolicy::from_lists(None, Some("http://ui.example:5173/"));
        assert!(listed.origin_allowed("http://ui.example:5173", Some("127.0.0.1:3000")));
        assert!(!listed.origin_allowed("http://ui.example:5174", Some("127.0.0.1:3000")));
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(Some("application/x-www-form-urlencoded")));
        assert!(!is_json(None));
    }
}
