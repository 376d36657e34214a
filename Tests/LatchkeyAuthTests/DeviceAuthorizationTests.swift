import Foundation
import LatchkeyHTTP
import Testing
@testable import LatchkeyAuth

@Suite struct DeviceAuthorizationTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func parse(_ json: String) throws -> DeviceAuthorization {
        try DeviceAuthorization.parse(AuthHTTPResponse(status: 200, fields: ["Content-Type": "application/json"], body: Array(json.utf8)), now: now)
    }

    /// RFC 8628 §3.2.
    @Test func rfcExample() throws {
        let authorization = try parse("""
            {"device_code": "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS", "user_code": "WDJB-MJHT",
             "verification_uri": "https://example.com/device",
             "verification_uri_complete": "https://example.com/device?user_code=WDJB-MJHT", "expires_in": 1800, "interval": 5}
            """)
        #expect(authorization == DeviceAuthorization(
            deviceCode: "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS", userCode: "WDJB-MJHT",
            verificationURI: "https://example.com/device", verificationURIComplete: "https://example.com/device?user_code=WDJB-MJHT",
            expiresIn: .seconds(1800), interval: .seconds(5)))
    }

    /// Google spells it verification_url; no interval means 5 seconds.
    @Test func googleShapeAndDefaultInterval() throws {
        let authorization = try parse(#"{"device_code":"AH-1Ng","user_code":"GQVQ-JKEC","verification_url":"https://www.google.com/device","expires_in":"1800"}"#)
        #expect(authorization.verificationURI == "https://www.google.com/device")
        #expect(authorization.verificationURIComplete == nil)
        #expect(authorization.expiresIn == .seconds(1800))
        #expect(authorization.interval == .seconds(5))
    }

    @Test func missingFieldsAreNamed() {
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has no verification_uri")) {
            try parse(#"{"device_code":"d","user_code":"u","expires_in":600}"#)
        }
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has no device_code")) {
            try parse(#"{"user_code":"u","verification_uri":"https://x","expires_in":600}"#)
        }
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has an unusable expires_in")) {
            try parse(#"{"device_code":"d","user_code":"u","verification_uri":"https://x","expires_in":0}"#)
        }
    }
}
