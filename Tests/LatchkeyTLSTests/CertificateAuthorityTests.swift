import COpenSSL
import Foundation
import Testing
@testable import LatchkeyTLS

@Suite struct CertificateAuthorityTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static let authority = try! CertificateAuthority.make(commonName: "Latchkey local CA (test)", lifetime: .seconds(365 * 86_400), now: now)

    @Test func theMadeCAIsASelfSignedP256CAForLeavesOnly() throws {
        let ca = Self.authority.certificate
        #expect(ca.subject == "CN=Latchkey local CA (test),O=Latchkey")
        #expect(ca.issuer == ca.subject)
        #expect(ca.notBefore == Self.now.addingTimeInterval(-3_600))
        #expect(ca.notAfter == Self.now.addingTimeInterval(365 * 86_400))
        #expect(ca.matches(Self.authority.key))
        #expect(EVP_PKEY_get_base_id(Self.authority.key.pkey) == EVP_PKEY_EC)
        #expect(X509_check_ca(ca.x509) == 1)
        #expect(X509_get_pathlen(ca.x509) == 0)
        #expect(X509_get_key_usage(ca.x509) == UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN))
        #expect(ChainVerifier.isCritical(ca, NID_basic_constraints) == true)
        #expect(ChainVerifier.isCritical(ca, NID_key_usage) == true)
        #expect(ChainVerifier.isCritical(ca, NID_subject_key_identifier) == false)
        // 128 random bits, positive: 16 bytes or fewer when the top ones came out zero.
        let serial = X509_get0_serialNumber(ca.x509)!
        #expect((1...16).contains(ASN1_STRING_length(serial)))
        let other = try CertificateAuthority.make(commonName: "Latchkey local CA (test)", lifetime: .seconds(86_400), now: Self.now)
        #expect(ASN1_INTEGER_cmp(serial, X509_get0_serialNumber(other.certificate.x509)) != 0)
    }

    @Test func aMintedLeafVerifiesForItsNamesAndAddressesOnly() throws {
        let leaf = try Self.authority.mintLeaf(names: ["localhost", "127.0.0.1", "::1", "app.test"], now: Self.now)
        let root = Self.authority.certificate
        #expect(leaf.chain.count == 2 && leaf.chain[1] === root)
        #expect(leaf.leaf.names == ["localhost", "127.0.0.1", "::1", "app.test"])
        #expect(leaf.leaf.subject == "CN=localhost")
        for host in ["localhost", "app.test", "LOCALHOST"] {
            #expect(ChainVerifier.verify(leaf, root: root, host: host, at: Self.now) == nil, "host \(host)")
        }
        for ip in ["127.0.0.1", "::1", "0:0:0:0:0:0:0:1"] {
            #expect(ChainVerifier.verify(leaf, root: root, ip: ip, at: Self.now) == nil, "ip \(ip)")
        }
        #expect(ChainVerifier.verify(leaf, root: root, host: "other.test", at: Self.now) == "hostname mismatch")
        #expect(ChainVerifier.verify(leaf, root: root, ip: "127.0.0.2", at: Self.now) == "IP address mismatch")
        // An address is an iPAddress entry, never a DNS name: a client asking for the name
        // "127.0.0.1" finds none.
        #expect(ChainVerifier.verify(leaf, root: root, host: "127.0.0.1", at: Self.now) == "hostname mismatch")
    }

    @Test func aMintedLeafIsAServerCertificateWithKeyIdentifiers() throws {
        let leaf = try Self.authority.mintLeaf(names: ["app.test"], now: Self.now).leaf
        #expect(X509_check_ca(leaf.x509) == 0)
        #expect(X509_get_key_usage(leaf.x509) == UInt32(KU_DIGITAL_SIGNATURE))
        #expect(X509_get_extended_key_usage(leaf.x509) == UInt32(XKU_SSL_SERVER))
        #expect(ChainVerifier.isCritical(leaf, NID_key_usage) == true)
        #expect(ChainVerifier.isCritical(leaf, NID_basic_constraints) == false)
        #expect(ChainVerifier.isCritical(leaf, NID_subject_alt_name) == false)
        let authorityKeyID = X509_get0_authority_key_id(leaf.x509)!
        #expect(ASN1_OCTET_STRING_cmp(authorityKeyID, X509_get0_subject_key_id(Self.authority.certificate.x509)) == 0)
        #expect(X509_get0_subject_key_id(leaf.x509) != nil)
    }

    @Test func aLeafIsBackdatedAnHourAndLivesSevenDays() throws {
        let identity = try Self.authority.mintLeaf(names: ["app.test"], now: Self.now)
        #expect(identity.leaf.notBefore == Self.now.addingTimeInterval(-3_600))
        #expect(identity.leaf.notAfter == Self.now.addingTimeInterval(7 * 86_400))
        let root = Self.authority.certificate
        #expect(ChainVerifier.verify(identity, root: root, host: "app.test", at: Self.now.addingTimeInterval(-3_000)) == nil)
        #expect(ChainVerifier.verify(identity, root: root, host: "app.test", at: Self.now.addingTimeInterval(-4_000)) == "certificate is not yet valid")
        #expect(ChainVerifier.verify(identity, root: root, host: "app.test", at: Self.now.addingTimeInterval(8 * 86_400)) == "certificate has expired")
    }

    @Test func aLeafEndsNoLaterThanItsCA() throws {
        let shortLived = try CertificateAuthority.make(commonName: "short", lifetime: .seconds(86_400), now: Self.now)
        let identity = try shortLived.mintLeaf(names: ["app.test"], now: Self.now)
        #expect(identity.leaf.notAfter == shortLived.certificate.notAfter)
        #expect(throws: TLSError.self) { try shortLived.mintLeaf(names: ["app.test"], now: Self.now.addingTimeInterval(2 * 86_400)) }
    }

    @Test func aLongNameIsAnAlternativeNameOnly() throws {
        let long = String(repeating: "a", count: 60) + ".example.test"
        let identity = try Self.authority.mintLeaf(names: [long], now: Self.now)
        #expect(identity.leaf.subject == "")
        #expect(ChainVerifier.isCritical(identity.leaf, NID_subject_alt_name) == true)
        #expect(ChainVerifier.verify(identity, root: Self.authority.certificate, host: long, at: Self.now) == nil)
    }

    @Test(arguments: ["", "a,IP:10.0.0.1", "bad name", "-x.test", "a..test", "é.test"])
    func whatIsNeitherANameNorAnAddressIsRefused(_ name: String) {
        #expect(throws: TLSError.self) { try Self.authority.mintLeaf(names: [name], now: Self.now) }
    }

    @Test func noNameIsRefused() {
        #expect(throws: TLSError(.setup, "cannot mint a certificate for no name")) { try Self.authority.mintLeaf(names: [], now: Self.now) }
    }

    @Test func pemRoundTrips() throws {
        let identity = try Self.authority.mintLeaf(names: ["app.test"], now: Self.now)
        let certificate = try Certificate.chain(pem: identity.leaf.pem(), origin: "leaf").first!
        #expect(certificate.isSame(as: identity.leaf))
        let key = try PrivateKey.load(pem: identity.key.pem(), origin: "key")
        #expect(certificate.matches(key))
        #expect(!certificate.matches(Self.authority.key))
        #expect(String(decoding: try identity.key.pem(), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    }
}
