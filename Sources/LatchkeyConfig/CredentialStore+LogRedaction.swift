import LatchkeyLogging

/// Log lines mask every value the store holds, the current set after a reload.
extension CredentialStore: LogRedactionSource {
    public var redactionMask: SecretMask { snapshot.redactionMask }
}
