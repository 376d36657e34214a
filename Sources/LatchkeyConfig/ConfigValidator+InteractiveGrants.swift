extension ConfigValidator {
    /// `grant: authorization_code`: the authorization endpoint (or the issuer's metadata
    /// names it) and the loopback redirect `latchkey login` listens on.
    mutating func validateAuthorizationCode(_ raw: ConfigMapping) -> IdentityConfig.Grant {
        let path = raw.path
        var login = IdentityConfig.AuthorizationCodeLogin()
        if let url = raw.string("authorization_url") {
            if case .failure(let failure) = ConfigSyntax.authorizationURL(url) {
                diagnostics.error(path / "authorization_url", failure.message, expected: failure.expected)
            }
            login.authorizationURL = url
        } else if raw.node("issuer") == nil {
            diagnostics.error(path, "missing key 'authorization_url' or 'issuer'",
                              expected: "the IdP's authorization endpoint URL, or its issuer URL for discovery")
        }
        if let port = raw.int("redirect_port") {
            if let valid = UInt16(exactly: port) {
                login.redirectPort = valid
            } else {
                diagnostics.error(path / "redirect_port", "out of range", expected: "a port from 1 to 65535, or 0 for any free port")
            }
        }
        if let redirectPath = raw.string("redirect_path") {
            if let failure = ConfigSyntax.redirectPath(redirectPath) {
                diagnostics.error(path / "redirect_path", failure.message, expected: failure.expected)
            }
            login.redirectPath = redirectPath
        }
        return .authorizationCode(login)
    }

    /// `grant: device_code`: the device authorization endpoint, or the issuer's metadata
    /// names it. It is called like the token endpoint, with the same TLS and proxy settings.
    mutating func validateDeviceCode(_ raw: ConfigMapping) -> IdentityConfig.Grant {
        let path = raw.path
        let url = raw.string("device_authorization_url")
        if let url {
            if case .failure(let failure) = ConfigSyntax.upstreamURL(url) {
                diagnostics.error(path / "device_authorization_url", failure.message, expected: failure.expected)
            }
        } else if raw.node("issuer") == nil {
            diagnostics.error(path, "missing key 'device_authorization_url' or 'issuer'",
                              expected: "the IdP's device authorization endpoint URL, or its issuer URL for discovery")
        }
        return .deviceCode(deviceAuthorizationURL: url)
    }
}
