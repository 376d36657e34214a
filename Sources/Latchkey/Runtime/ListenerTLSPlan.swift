import LatchkeyConfig

/// What a TLS listener's server context is made from, decided from its configuration
/// alone: a reload rebuilds the context of a listener whose plan changed, and the file
/// watcher that of a listener one of whose `files` changed.
struct ListenerTLSPlan: Sendable, Equatable {
    enum Identity: Sendable, Equatable {
        case files(certFile: String, keyFile: String)
        /// A leaf of the local CA for these names (ListenerConfig.localCANames).
        case localCA(names: [String])
    }

    let identity: Identity
    /// `inbound.client_ca_file`: clients must present a certificate one of its CAs signed.
    let clientCAFile: String?

    /// Nil for a plain-HTTP listener.
    init?(_ listener: ListenerConfig) {
        guard let tls = listener.tls else { return nil }
        switch tls.certificate {
        case .files(let certFile, let keyFile): identity = .files(certFile: certFile, keyFile: keyFile)
        case .localCA: identity = .localCA(names: listener.localCANames(bound: listener.address.socketAddress))
        }
        clientCAFile = if case .clientCertificate(let caFile) = listener.inbound { caFile } else { nil }
    }

    var usesLocalCA: Bool {
        if case .localCA = identity { return true }
        return false
    }

    /// The files the context is read from (the local CA's are the authority's).
    var files: [String] {
        var files: [String] = []
        if case .files(let certFile, let keyFile) = identity { files += [certFile, keyFile] }
        if let clientCAFile { files.append(clientCAFile) }
        return files
    }
}
