import LatchkeyConfig

extension IdentityConfig {
    /// What a failed token request means for the identity's lifecycle: a dead grant
    /// (`invalid_grant`) is renewed another way; an answer that refuses the configuration
    /// itself is a misconfiguration that names the key to fix, and is not retried until
    /// that changes; the rest (an IdP that is down, slow, overloaded, or answers something
    /// else) backs off and tries again.
    func acquisitionFailure(_ error: TokenEndpointError) -> AcquisitionFailure {
        if error.isInvalidGrant { return AcquisitionFailure(.rejected, error.message, retryAfter: error.retryAfter) }
        if !error.isRetryable, let code = error.oauthCode, let key = keyToFix(code) {
            return AcquisitionFailure(.misconfigured(configKey: key), error.message)
        }
        return AcquisitionFailure(.transient, error.message, retryAfter: error.retryAfter)
    }

    /// The configuration key to fix when the token endpoint answers `code` (RFC 6749 §5.2),
    /// named as the configuration's own messages name it (`identities.podio.client_secret`);
    /// nil for codes that do not mean the configuration is wrong. The one place that maps
    /// these errors to keys.
    func keyToFix(_ code: OAuthError.Code) -> String? {
        let key: String
        switch code {
        case .invalidClient:
            // The client's authentication failed: what it authenticates with.
            switch clientAuth {
            case .clientSecretBasic, .clientSecretPost: key = "client_secret"
            case .privateKeyJWT: key = "client_key_file"
            case .none: key = "client_id"
            }
        case .unauthorizedClient:
            // This client may not use this grant: the wrong client, or, for a client known
            // only by its assertion, the wrong grant.
            key = clientID == nil ? "grant" : "client_id"
        case .unsupportedGrantType:
            if case .custom = grant { key = "grant_type" } else { key = "grant" }
        case .invalidScope:
            key = "scope"
        case .invalidRequest, .invalidGrant, .invalidTarget, .serverError, .temporarilyUnavailable, .unsupportedTokenType,
             .authorizationPending, .slowDown, .accessDenied, .expiredToken:
            return nil
        }
        return configPath(key)
    }
}
