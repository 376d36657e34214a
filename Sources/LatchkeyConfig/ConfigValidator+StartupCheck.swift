extension ConfigValidator {
    /// `check_on_start`: which endpoint judges a restored token, and its URL (given, or
    /// named by the issuer's metadata). An endpoint URL the check does not ask is a mistake.
    mutating func validateStartupCheck(_ raw: ConfigMapping) -> IdentityConfig.StartupCheck? {
        let path = raw.path
        let userinfoURL = raw.string("userinfo_url"), introspectionURL = raw.string("introspection_url")
        for (key, url) in [("userinfo_url", userinfoURL), ("introspection_url", introspectionURL)] {
            if let url, case .failure(let failure) = ConfigSyntax.upstreamURL(url) {
                diagnostics.error(path / key, failure.message, expected: failure.expected)
            }
        }
        let endpointKeys = ["userinfo_url", "introspection_url"]
        guard let name = raw.string("check_on_start") else {
            for key in endpointKeys where raw.contains(key) {
                diagnostics.error(path / key, "not used without check_on_start", expected: "check_on_start: userinfo or introspection")
            }
            return nil
        }
        let check: IdentityConfig.StartupCheck
        let endpointKey: String
        switch name {
        case "userinfo":
            check = .userinfo(url: userinfoURL)
            endpointKey = "userinfo_url"
        case "introspection":
            check = .introspection(url: introspectionURL)
            endpointKey = "introspection_url"
        default:
            diagnostics.error(path / "check_on_start", "unknown check\(ConfigSyntax.quoted(name))",
                              expected: "userinfo (OIDC, asked with the token itself) or introspection (RFC 7662, asked with the client's credentials)")
            return nil
        }
        for key in endpointKeys where key != endpointKey && raw.contains(key) {
            diagnostics.error(path / key, "not used by check_on_start: \(name)", expected: endpointKey)
        }
        if !raw.contains(endpointKey), raw.node("issuer") == nil {
            diagnostics.error(path, "missing key '\(endpointKey)' or 'issuer'",
                              expected: "the endpoint that checks a restored token, or the issuer URL for discovery")
        }
        return check
    }
}
