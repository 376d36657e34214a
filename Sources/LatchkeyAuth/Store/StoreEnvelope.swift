#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bytes of one store file: a JSON object tagged with its format that holds the record
/// in the clear,
///
///     {"format":"latchkey-token-v1","token":{"access_token":"…",…}}
///
/// or sealed with the store key (nonce, ciphertext and tag in base64url),
///
///     {"format":"latchkey-token-v1","cipher":"aes-256-gcm","nonce":"…","ciphertext":"…","tag":"…"}
///
/// The seal's additional data is the format, the cipher and the identity's name: a sealed
/// file copied over another identity's does not open.
enum StoreEnvelope {
    static let format = "latchkey-token-v1"
    static let cipher = "aes-256-gcm"
    /// What later formats will start with: a file of one is not corrupt, only too new.
    static let formatFamily = "latchkey-token-"

    /// The file's bytes for `record`, sealed when there is a key.
    static func encode(_ record: StoredRecord, identity: String, key: StoreKey?) throws(TokenStoreError) -> [UInt8] {
        do {
            guard let key else { return Array(try JSONEncoder.store.encode(Plain(record: record))) }
            var plaintext = Array(try JSONEncoder.store.encode(record))
            defer { StoreKey.wipe(&plaintext) }
            let sealed = try StoreCipher.seal(plaintext, additionalData: additionalData(identity), key: key)
            return Array(try JSONEncoder.store.encode(SealedDocument(sealed, format: format)))
        } catch let error as CryptoError {
            throw TokenStoreError(.writeFailed, "cannot seal the token of identity \(identity): \(error)")
        } catch {
            throw TokenStoreError(.writeFailed, "cannot encode the token of identity \(identity): \(error)")
        }
    }

    /// The record in `bytes`, and whether it was sealed. `entry` names where the bytes
    /// came from in messages: "store file /path/idp.json", "redis key latchkey:token:idp". Throws `.corrupt` for what is not
    /// a store file at all; `.keyMissing`, `.wrongKey` and `.unsupportedFormat` for a
    /// well-formed file this store cannot read, which must be left as it is.
    static func decode(_ bytes: [UInt8], identity: String, key: StoreKey?, entry: String) throws(TokenStoreError) -> (record: StoredRecord, sealed: Bool) {
        func corrupt(_ why: String) -> TokenStoreError {
            TokenStoreError(.corrupt, "\(entry) is not a Latchkey token file (\(why))")
        }
        let data = Data(bytes)
        guard !bytes.isEmpty else { throw corrupt("it is empty") }
        guard let probe = try? JSONDecoder().decode(Probe.self, from: data) else { throw corrupt("not a JSON object; truncated?") }
        guard let format = probe.format else { throw corrupt("no format tag") }
        guard format == Self.format else {
            guard format.hasPrefix(formatFamily) else { throw corrupt("an unknown format tag") }
            throw TokenStoreError(.unsupportedFormat, "\(entry) has a newer format than this version of Latchkey reads; "
                + "run the version that wrote it, or remove it")
        }
        guard let cipher = probe.cipher else {
            guard let plain = try? JSONDecoder().decode(Plain.self, from: data) else { throw corrupt("its token is malformed") }
            return (plain.record, false)
        }
        guard cipher == Self.cipher else {
            throw TokenStoreError(.unsupportedFormat, "\(entry) is sealed with a cipher this version of Latchkey does not know")
        }
        guard let sealed = (try? JSONDecoder().decode(SealedDocument.self, from: data))?.sealed,
              sealed.nonce.count == StoreCipher.nonceBytes, sealed.tag.count == StoreCipher.tagBytes
        else { throw corrupt("its sealed fields are malformed") }
        guard let key else {
            throw TokenStoreError(.keyMissing, "\(entry) is encrypted, but no store key is configured; "
                + "set \(StoreKey.environmentVariable), store.key_file or the systemd credential \(StoreKey.credentialName)")
        }
        var plaintext: [UInt8]
        do {
            plaintext = try StoreCipher.open(sealed, additionalData: additionalData(identity), key: key)
        } catch where error.code == .authenticationFailed {
            throw TokenStoreError(.wrongKey, "\(entry) does not open with the store key from \(key.origin): "
                + "it was sealed with another key, for another identity, or altered; it is left as it is")
        } catch {
            throw TokenStoreError(.unusablePath, "cannot decrypt \(entry): \(error)")
        }
        defer { StoreKey.wipe(&plaintext) }
        guard let record = try? JSONDecoder().decode(StoredRecord.self, from: Data(plaintext)) else { throw corrupt("its sealed token is malformed") }
        return (record, true)
    }

    /// `record` as it reads back from a file: times go through their JSON form, so that a
    /// record read later compares equal to the one written.
    static func normalized(_ record: StoredRecord) -> StoredRecord {
        guard let data = try? JSONEncoder.store.encode(record), let read = try? JSONDecoder().decode(StoredRecord.self, from: data) else { return record }
        return read
    }

    static func additionalData(_ identity: String) -> [UInt8] {
        Array("\(format)\0\(cipher)\0\(identity)".utf8)
    }

    /// The two keys that say which kind of file this is.
    private struct Probe: Decodable {
        var format: String?
        var cipher: String?
    }

    /// The format tag with the record's own keys beside it.
    private struct Plain: Codable {
        var record: StoredRecord

        init(record: StoredRecord) { self.record = record }

        init(from decoder: any Decoder) throws {
            record = try StoredRecord(from: decoder)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: FormatKey.self)
            try container.encode(StoreEnvelope.format, forKey: .format)
            try record.encode(to: encoder)
        }
    }

    private enum FormatKey: String, CodingKey {
        case format
    }
}

extension JSONEncoder {
    /// Sorted keys: the same record always makes the same bytes.
    static var store: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
