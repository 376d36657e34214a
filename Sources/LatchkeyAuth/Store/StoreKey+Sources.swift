import LatchkeyLoop

extension StoreKey {
    /// The environment variable that may hold the key's text.
    public static let environmentVariable = "LATCHKEY_STORE_KEY"
    /// The name of the systemd credential (`LoadCredential=latchkey-store-key:/path`),
    /// found in `$CREDENTIALS_DIRECTORY`.
    public static let credentialName = "latchkey-store-key"

    /// The key from whichever source gives one: `LATCHKEY_STORE_KEY`, the configured key
    /// file (which must be private: owned by the user or root, mode 0600 or 0400), or the
    /// systemd credential. nil when none does (the store is then plaintext, protected by
    /// its permissions only). Two sources at once are refused rather than ranked: a key
    /// left over in the environment must not silently shadow the one configured.
    public static func configured(keyFile: String?, environment: [String: String]) throws(TokenStoreError) -> StoreKey? {
        var sources: [(origin: String, read: () throws(TokenStoreError) -> [UInt8])] = []
        if let text = environment[environmentVariable] {
            sources.append(("environment variable \(environmentVariable)", { Array(text.utf8) }))
        }
        if let keyFile {
            sources.append(("key file \(keyFile)", { () throws(TokenStoreError) in try file(keyFile, .keyFile) }))
        }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/" + credentialName
            if FileSignature(path: path) != nil {
                sources.append(("systemd credential \(path)", { () throws(TokenStoreError) in try file(path, .systemdCredential) }))
            }
        }
        guard let source = sources.first else { return nil }
        guard sources.count == 1 else {
            throw TokenStoreError(.invalidKey, "the store key is given more than once (\(sources.map(\.origin).joined(separator: ", "))); keep one")
        }
        var text = try source.read()
        return try StoreKey(text: &text, origin: source.origin)
    }

    private static func file(_ path: String, _ kind: PrivateFile.Kind) throws(TokenStoreError) -> [UInt8] {
        guard let file = try PrivateFile.read(path, kind) else {
            throw TokenStoreError(.invalidKey, "\(kind.noun) \(path) does not exist")
        }
        return file.bytes
    }
}
