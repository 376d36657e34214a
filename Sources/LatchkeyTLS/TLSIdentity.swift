/// What a TLS server presents: its certificate, the chain up to (not including) a root,
/// and the private key of the certificate.
public struct TLSIdentity: Sendable {
    /// The leaf first, then its issuers.
    public let chain: [Certificate]
    public let key: PrivateKey

    public init(chain: [Certificate], key: PrivateKey) {
        precondition(!chain.isEmpty, "a TLS identity needs a certificate")
        self.chain = chain
        self.key = key
    }

    public var leaf: Certificate { chain[0] }
}
