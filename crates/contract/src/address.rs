//! Which addresses are the public internet — for the policy (a request to an address inside is
//! refused unless a rule names it) and for the web family's client (which checks again after DNS
//! resolution). std's `is_global` is unstable, and SSRF guards must
//! list what they refuse explicitly anyway (cloud metadata addresses are "link-local" to std but a
//! distinct danger), so the ranges are written out here, each with its RFC.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address a name resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Public,
    Loopback,
    /// RFC 1918, shared address space (RFC 6598), IPv6 unique local (RFC 4193).
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// Cloud instance metadata (169.254.169.254, fd00:ec2::254): credentials live there.
    Metadata,
    /// Unspecified, multicast, broadcast, documentation and reserved ranges.
    Reserved,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Public => "a public address",
            Kind::Loopback => "this computer (loopback)",
            Kind::Private => "a private network address",
            Kind::LinkLocal => "a link-local address",
            Kind::Metadata => "the cloud metadata service",
            Kind::Reserved => "a reserved address",
        }
    }
}

pub fn classify(ip: IpAddr) -> Kind {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Kind {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => Kind::Metadata,
        (127, _, _) => Kind::Loopback,
        (10, _, _) | (192, 168, _) => Kind::Private,
        (172, 16..=31, _) => Kind::Private,
        (100, 64..=127, _) => Kind::Private,
        (169, 254, _) => Kind::LinkLocal,
        (0, _, _) | (224..=255, _, _) => Kind::Reserved,
        // IETF protocol assignments, documentation (TEST-NET-1/2/3), benchmarking.
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            Kind::Reserved
        }
        _ => Kind::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> Kind {
    if ip.is_loopback() {
        return Kind::Loopback;
    }
    if ip.is_unspecified() || ip.is_multicast() {
        return Kind::Reserved;
    }
    // An IPv4 address inside IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96) is that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let segments = ip.segments();
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return classify_v4(Ipv4Addr::new(a, b, c, d));
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Kind::Metadata;
    }
    match segments[0] {
        0xfc00..=0xfdff => Kind::Private,
        0xfe80..=0xfebf => Kind::LinkLocal,
        // Documentation (2001:db8::/32).
        0x2001 if segments[1] == 0x0db8 => Kind::Reserved,
        _ => Kind::Public,
    }
}

/// The kind of the host of `origin` (`scheme://host[:port]`) when it can be told without DNS:
/// an address written as numbers, or `localhost` (RFC 6761: always this computer). `None` for
/// names and for what does not parse.
pub fn literal_host_kind(origin: &str) -> Option<Kind> {
    let url = url::Url::parse(origin).ok()?;
    match url.host()? {
        url::Host::Ipv4(ip) => Some(classify(ip.into())),
        url::Host::Ipv6(ip) => Some(classify(ip.into())),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            (name == "localhost" || name.ends_with(".localhost")).then_some(Kind::Loopback)
        }
    }
}

/// The origin (`scheme://host:port`) of an http(s) address, with the parsed address.
pub fn web_origin(raw: &str) -> Result<(url::Url, String), crate::ToolError> {
    let url = url::Url::parse(raw.trim()).map_err(|e| {
        crate::ToolError::invalid(format!(
            "{raw:?} is not a web address ({e}): give a full http(s) URL"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(crate::ToolError::invalid(format!(
            "{raw:?}: only http and https addresses can be opened"
        )));
    }
    let origin = url.origin().ascii_serialization();
    Ok((url, origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_lead_inside_are_told_apart_from_the_internet() {
        let cases: &[(&str, Kind)] = &[
            ("8.8.8.8", Kind::Public),
            ("93.184.216.34", Kind::Public),
            ("127.0.0.1", Kind::Loopback),
            ("127.8.9.10", Kind::Loopback),
            ("10.1.2.3", Kind::Private),
            ("172.16.0.1", Kind::Private),
            ("172.31.255.255", Kind::Private),
            ("172.32.0.1", Kind::Public),
            ("192.168.1.1", Kind::Private),
            ("100.64.0.1", Kind::Private),
            ("169.254.169.254", Kind::Metadata),
            ("169.254.1.1", Kind::LinkLocal),
            ("0.0.0.0", Kind::Reserved),
            ("255.255.255.255", Kind::Reserved),
            ("224.0.0.1", Kind::Reserved),
            ("::1", Kind::Loopback),
            ("::", Kind::Reserved),
            ("::ffff:127.0.0.1", Kind::Loopback),
            ("::ffff:10.0.0.1", Kind::Private),
            ("64:ff9b::a9fe:a9fe", Kind::Metadata),
            ("fd00:ec2::254", Kind::Metadata),
            ("fc00::1", Kind::Private),
            ("fe80::1", Kind::LinkLocal),
            ("2001:db8::1", Kind::Reserved),
            ("2606:4700:4700::1111", Kind::Public),
        ];
        for (ip, kind) in cases {
            assert_eq!(classify(ip.parse().unwrap()), *kind, "{ip}");
        }
    }

    #[test]
    fn hosts_written_as_addresses_or_localhost_are_known_without_dns() {
        assert_eq!(
            literal_host_kind("http://127.0.0.1:8080"),
            Some(Kind::Loopback)
        );
        assert_eq!(literal_host_kind("http://[::1]"), Some(Kind::Loopback));
        assert_eq!(literal_host_kind("http://LOCALHOST."), Some(Kind::Loopback));
        assert_eq!(
            literal_host_kind("http://api.localhost"),
            Some(Kind::Loopback)
        );
        assert_eq!(literal_host_kind("http://0x7f.1"), Some(Kind::Loopback));
        assert_eq!(
            literal_host_kind("http://169.254.169.254"),
            Some(Kind::Metadata)
        );
        assert_eq!(literal_host_kind("https://example.org"), None);
        assert_eq!(literal_host_kind("https://8.8.8.8"), Some(Kind::Public));
        assert!(web_origin("file:///etc/passwd").is_err());
        assert_eq!(
            web_origin("https://Example.org/a?b").unwrap().1,
            "https://example.org"
        );
    }
}
