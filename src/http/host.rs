//! The `Host` check against DNS rebinding: which names a request may address the server
//! by ([`AllowedHosts`]), decided from the `Host` header (or an HTTP/2 request's
//! authority) alone, before anything else runs.
//!
//! The attack (Jackson et al., "Protecting Browsers from DNS Rebinding Attacks", 2007): a
//! page on `evil.example` makes its name resolve to 127.0.0.1, and the browser, which
//! checks origins by name, lets that page read `http://evil.example:7878/api/...` from a
//! server bound to loopback. The browser still sends `Host: evil.example:7878`; refusing
//! every name the server does not answer for ends it. The rule follows what local
//! development servers do (webpack-dev-server's `allowedHosts`, Vite's
//! `server.allowedHosts`): loopback names and addresses always pass, other names only
//! when listed, or any when the operator says so.
//!
//! A request with no `Host` at all passes: browsers always send one, so it cannot come
//! from the page of an attacker, and in-process callers (`Router::oneshot`) often send
//! none.

use std::net::IpAddr;
use std::sync::Arc;

/// Which `Host` names requests may use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum AllowedHosts {
    /// Loopback names and addresses only (`localhost`, `127.0.0.0/8`, `[::1]`, any port).
    #[default]
    Loopback,
    /// Loopback, and these names (lowercase; a name with a port matches that port only,
    /// one without matches any port).
    Listed(Vec<Arc<str>>),
    /// Any name (the operator answers for it: a trusted network, or a proxy that checks).
    Any,
}

impl AllowedHosts {
    /// Adds `names` (trimmed, lowercase; empty ones are skipped) to the allowed ones.
    pub(crate) fn with(self, names: impl IntoIterator<Item = String>) -> Self {
        let mut listed = match self {
            AllowedHosts::Any => return AllowedHosts::Any,
            AllowedHosts::Loopback => Vec::new(),
            AllowedHosts::Listed(listed) => listed,
        };
        for name in names {
            let name = name.trim().to_ascii_lowercase();
            if !name.is_empty() && !listed.iter().any(|n| **n == *name) {
                listed.push(name.into());
            }
        }
        AllowedHosts::Listed(listed)
    }

    /// Whether only the defaults are allowed (no name listed, not any).
    pub(crate) fn is_loopback_only(&self) -> bool {
        matches!(self, AllowedHosts::Loopback)
    }

    /// Whether a request whose `Host` is `host` (`None`: absent) may be answered.
    pub(crate) fn allows(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return true;
        };
        if matches!(self, AllowedHosts::Any) {
            return true;
        }
        let full = host.trim().to_ascii_lowercase();
        let name = without_port(&full);
        if is_loopback(name) {
            return true;
        }
        match self {
            AllowedHosts::Listed(listed) => listed.iter().any(|n| **n == *name || **n == *full),
            _ => false,
        }
    }
}

/// `host` without its `:port`, if it has one (`[::1]:80` → `[::1]`, `a:80` → `a`).
fn without_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `localhost` (with or without the root's dot) or a loopback address literal.
fn is_loopback(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name == "localhost" {
        return true;
    }
    let literal = name
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(name);
    literal
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_pass_by_default_and_nothing_else() {
        let hosts = AllowedHosts::default();
        for host in [
            "localhost",
            "localhost:7878",
            "LOCALHOST.:7878",
            "127.0.0.1",
            "127.0.0.1:7878",
            "127.8.9.10:1",
            "[::1]",
            "[::1]:7878",
            "[::ffff:127.0.0.1]:80",
        ] {
            assert!(hosts.allows(Some(host)), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:7878",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "10.0.0.1:7878",
            "[::2]:7878",
            "",
            "[::1",
        ] {
            assert!(!hosts.allows(Some(host)), "{host}");
        }
        assert!(hosts.allows(None), "no Host: not a browser");
        assert!(hosts.is_loopback_only());
    }

    #[test]
    fn listed_names_pass_with_any_port_or_only_the_listed_one() {
        let hosts = AllowedHosts::default().with(["Ops.Internal".into(), "box:8080".into()]);
        assert!(hosts.allows(Some("ops.internal")));
        assert!(hosts.allows(Some("OPS.internal:7878")));
        assert!(hosts.allows(Some("box:8080")));
        assert!(!hosts.allows(Some("box:8081")));
        assert!(!hosts.allows(Some("box")));
        assert!(hosts.allows(Some("localhost:1")), "loopback stays allowed");
        assert!(!hosts.allows(Some("evil.example")));
        assert!(!hosts.is_loopback_only());
        let again = hosts.clone().with(["ops.internal".into(), " ".into()]);
        assert_eq!(again, hosts, "duplicates and blanks are skipped");
    }

    #[test]
    fn any_allows_every_name_and_stays_any() {
        let any = AllowedHosts::Any.with(["x".into()]);
        assert_eq!(any, AllowedHosts::Any);
        assert!(any.allows(Some("evil.example:1")));
    }
}
