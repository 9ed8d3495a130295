//! The endpoint rule of SPEC §3.2 and §8.1: `https://`, or `http://` to a loopback host
//! (`localhost`, `127.0.0.0/8`, `[::1]`). Anything else is refused.
//!
//! Error messages never echo the URL: a URL can carry a key in its query or user info.

use std::net::IpAddr;

use url::{Host, Url};

/// Where an endpoint is used; provider base URLs get a path appended, so they must not carry
/// a query or fragment, while a child server's URL is used as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointUse {
    ProviderBaseUrl,
    ChildServer,
}

/// Parses `raw` and applies the https/loopback rule.
pub fn check_endpoint(raw: &str, usage: EndpointUse) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| format!("is not a valid URL ({e})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "must not contain credentials (user info); name an environment variable instead"
                .to_owned(),
        );
    }
    if usage == EndpointUse::ProviderBaseUrl && (url.query().is_some() || url.fragment().is_some())
    {
        return Err("must not have a query or fragment".to_owned());
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" => match url.host() {
            Some(host) if is_loopback(&host) => Ok(url),
            Some(host) => Err(format!(
                "uses http:// to {}, which is not a loopback host; use https:// \
                 (plain http:// is allowed only to localhost, 127.0.0.0/8 or [::1])",
                host_for_message(&host)
            )),
            None => Err("has no host".to_owned()),
        },
        "https" => Err("has no host".to_owned()),
        other => Err(format!(
            "uses the scheme {other:?}; use https:// (or http:// to a loopback host)"
        )),
    }
}

/// `localhost` (any case, optionally with a trailing dot), 127.0.0.0/8, `::1`, and the IPv4
/// loopback range written as an IPv4-mapped IPv6 address.
pub fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            name.eq_ignore_ascii_case("localhost")
        }
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => {
            ip.is_loopback()
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| IpAddr::V4(v4).is_loopback())
        }
    }
}

fn host_for_message(host: &Host<&str>) -> String {
    match host {
        Host::Domain(d) => (*d).to_owned(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => format!("[{ip}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::{EndpointUse::*, check_endpoint};

    #[test]
    fn loopback_http_is_allowed() {
        for ok in [
            "http://localhost",
            "http://localhost:8080/v1",
            "http://LOCALHOST/",
            "http://127.0.0.1:9/x",
            "http://127.0.0.2",
            "http://127.255.255.254",
            "http://[::1]:3000/mcp",
            "http://[::ffff:127.0.0.1]/",
            "https://api.openai.com/v1",
            "https://10.0.0.1/",
        ] {
            assert!(check_endpoint(ok, ProviderBaseUrl).is_ok(), "{ok}");
        }
    }

    #[test]
    fn non_loopback_http_and_other_schemes_are_refused() {
        for bad in [
            "http://localhost.example.com",
            "http://10.0.0.1",
            "http://0.0.0.0",
            "http://[::2]",
            "http://example.com",
            "ftp://localhost",
            "file:///etc/passwd",
            "localhost:8080",
            "not a url",
            "https://user:secret@api.example.com",
        ] {
            assert!(check_endpoint(bad, ProviderBaseUrl).is_err(), "{bad}");
        }
    }

    #[test]
    fn provider_urls_take_no_query_but_child_urls_may() {
        assert!(check_endpoint("https://x.example/v1?a=b", ProviderBaseUrl).is_err());
        assert!(check_endpoint("https://x.example/mcp?a=b", ChildServer).is_ok());
    }

    #[test]
    fn messages_never_echo_secrets_in_the_url() {
        let err = check_endpoint("https://user:hunter2@x.example", ChildServer).unwrap_err();
        assert!(!err.contains("hunter2"));
        let err = check_endpoint("http://x.example/?key=hunter2", ChildServer).unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
