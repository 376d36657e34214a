/// A 256-bit secret key kept in a file of its own as `openssl rand -base64 32` writes it,
/// checked as the store's key file is: private to the user running Latchkey (0600 or
/// 0400, owned by that user or root), or refused.
public enum SecretKeyFile {
    /// The key's bytes. `noun` names the key in messages ("session key").
    public static func read(_ path: String, noun: String) throws(CryptoError) -> [UInt8] {
        let key: StoreKey
        do throws(TokenStoreError) {
            guard var text = try PrivateFile.read(path, .keyFile)?.bytes else {
                throw TokenStoreError(.invalidKey, "the \(noun)'s key file \(path) does not exist")
            }
            key = try StoreKey(text: &text, origin: "key file \(path)", noun: noun)
        } catch {
            throw CryptoError(.keyFileUnreadable, detail: error.message)
        }
        return try key.withUnsafeBytes { Array($0) }
    }
}
