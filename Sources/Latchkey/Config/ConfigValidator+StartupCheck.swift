extension ConfigValidator {
    /// `check_on_start`: which endpoint judges a restored token, and its URL (given, or
    /// named by the issuer's metadata). An endpoint URL the check does not ask is a mistake.
    mutating func validateStartupCheck(_ raw: RawIdentity, at path: ConfigPath) -> IdentityConfig.StartupCheck? {
        for (key, url) in [(RawIdentity.CodingKeys.userinfo_url, raw.userinfoURL), (.introspection_url, raw.introspectionURL)] {
            if let url, case .failure(let failure) = ConfigSyntax.upstreamURL(url) {
                diagnostics.error(path / key.stringValue, failure.message, expected: failure.expected)
            }
        }
        let endpointKeys: [RawIdentity.CodingKeys] = [.userinfo_url, .introspection_url]
        guard let name = raw.checkOnStart else {
            for key in endpointKeys where raw.present.contains(key) {
                diagnostics.error(path / key.stringValue, "not used without check_on_start", expected: "check_on_start: userinfo or introspection")
            }
            return nil
        }
        let check: IdentityConfig.StartupCheck
        let endpointKey: RawIdentity.CodingKeys
        switch name {
        case "userinfo":
            check = .userinfo(url: raw.userinfoURL)
            endpointKey = .userinfo_url
        case "introspection":
            check = .introspection(url: raw.introspectionURL)
            endpointKey = .introspection_url
        default:
            diagnostics.error(path / "check_on_start", "unknown check\(ConfigSyntax.quoted(name))",
                              expected: "userinfo (OIDC, asked with the token itself) or introspection (RFC 7662, asked with the client's credentials)")
            return nil
        }
        for key in endpointKeys where key != endpointKey && raw.present.contains(key) {
            diagnostics.error(path / key.stringValue, "not used by check_on_start: \(name)", expected: endpointKey.stringValue)
        }
        if !raw.present.contains(endpointKey), raw.issuer == nil {
            diagnostics.error(path, "missing key '\(endpointKey.stringValue)' or 'issuer'",
                              expected: "the endpoint that checks a restored token, or the issuer URL for discovery")
        }
        return check
    }
}
