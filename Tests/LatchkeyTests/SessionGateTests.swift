import Foundation
import LatchkeyAuth
import LatchkeyHTTP
import Testing
@testable import Latchkey

@Suite struct SessionGateTests {
    private let keyA = MessageSigner(key: Array(repeating: 1, count: 32))
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func cookieFields(_ setCookie: String) -> HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Cookie", value: String(setCookie.split(separator: ";")[0]))
        return fields
    }

    private func session(_ gate: SessionGate, signer: MessageSigner, route: String = "api", at time: Date) throws -> String {
        let token = try LoginLink.token(route: route, signer: signer, now: time, lifetime: .seconds(300))
        guard case .session(let setCookie, let redeemedRoute) = gate.redeem(token, now: time) else {
            Issue.record("the link was refused")
            return ""
        }
        #expect(redeemedRoute == route)
        return setCookie
    }

    @Test func aLinkGivesASessionThatLastsItsLifetime() throws {
        let gate = SessionGate(signer: keyA, lifetime: .seconds(3600))
        let setCookie = try session(gate, signer: keyA, at: now)
        #expect(setCookie.hasSuffix("; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax"))
        #expect(gate.admits(cookieFields(setCookie), now: now.addingTimeInterval(3600)))
        #expect(!gate.admits(cookieFields(setCookie), now: now.addingTimeInterval(3601)))
        #expect(!gate.admits(HTTPFields(), now: now))
    }

    @Test func onATLSListenerTheSessionCookieIsSecure() throws {
        let gate = SessionGate(signer: keyA, lifetime: .seconds(60), secureCookie: true)
        #expect(try session(gate, signer: keyA, at: now).hasSuffix("; HttpOnly; SameSite=Lax; Secure"))
    }

    @Test func eachLinkWorksOnceAndUntilItExpires() throws {
        let gate = SessionGate(signer: keyA, lifetime: .seconds(60))
        let token = try LoginLink.token(route: "web.app", signer: keyA, now: now, lifetime: .seconds(300))
        #expect(LoginLink(verifying: token, with: keyA)?.route == "web.app")
        guard case .session = gate.redeem(token, now: now) else { Issue.record("refused"); return }
        #expect(gate.redeem(token, now: now) == .refused("this login link was used already; each works once"))
        let late = try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(300))
        guard case .refused(let reason) = gate.redeem(late, now: now.addingTimeInterval(301)) else { Issue.record("accepted"); return }
        #expect(reason.contains("expired"))
    }

    @Test func aGateMadeByAReloadRefusesTheLinksUsedBeforeIt() throws {
        let running = SessionGate(signer: keyA, lifetime: .seconds(60))
        let used = try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(300))
        guard case .session = running.redeem(used, now: now) else { Issue.record("refused"); return }
        let reloaded = SessionGate(signer: keyA, lifetime: .seconds(60), remembering: running)
        #expect(reloaded.redeem(used, now: now) == .refused("this login link was used already; each works once"))
        let fresh = try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(300))
        guard case .session = reloaded.redeem(fresh, now: now) else { Issue.record("a fresh link was refused"); return }
    }

    @Test func forgedLinksAndSessionsAndOnesOfTheOtherKindAreRefused() throws {
        let gate = SessionGate(signer: keyA, lifetime: .seconds(60))
        let stranger = MessageSigner(key: Array(repeating: 9, count: 32))
        guard case .refused = gate.redeem(try LoginLink.token(route: "api", signer: stranger, now: now, lifetime: .seconds(60)), now: now)
        else { Issue.record("accepted another key's link"); return }
        // A session value is not a link, and a link is not a session.
        let setCookie = try session(gate, signer: keyA, at: now)
        let sessionValue = String(setCookie.split(separator: ";")[0].dropFirst("latchkey_session=".count))
        guard case .refused = gate.redeem(sessionValue, now: now) else { Issue.record("a session redeemed as a link"); return }
        let link = try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(60))
        #expect(!gate.admits(cookieFields("latchkey_session=" + link), now: now))
        #expect(!gate.admits(cookieFields("latchkey_session=" + (try stranger.sign("session.x.1900000000"))), now: now))
    }

    @Test func aRotatedKeyStillAdmitsWhatThePreviousKeySigned() throws {
        let before = SessionGate(signer: keyA, lifetime: .seconds(60))
        let old = try session(before, signer: keyA, at: now)
        let keyB = MessageSigner(key: Array(repeating: 2, count: 32), previous: [Array(repeating: 1, count: 32)])
        let after = SessionGate(signer: keyB, lifetime: .seconds(60))
        #expect(after.admits(cookieFields(old), now: now.addingTimeInterval(60)))
        #expect(!after.admits(cookieFields(old), now: now.addingTimeInterval(61)))
        let dropped = SessionGate(signer: MessageSigner(key: Array(repeating: 2, count: 32)), lifetime: .seconds(60))
        #expect(!dropped.admits(cookieFields(old), now: now))
    }

    @Test func theMemoryOfUsedLinksIsBounded() throws {
        let gate = SessionGate(signer: keyA, lifetime: .seconds(60))
        for _ in 0..<SessionGate.maxRemembered {
            guard case .session = gate.redeem(try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(10)), now: now)
            else { Issue.record("refused while below the bound"); return }
        }
        let one = try LoginLink.token(route: "api", signer: keyA, now: now, lifetime: .seconds(10))
        guard case .refused(let reason) = gate.redeem(one, now: now) else { Issue.record("accepted over the bound"); return }
        #expect(reason.contains("too many"))
        // Once those links have expired, they are forgotten and new ones work.
        let later = now.addingTimeInterval(11)
        guard case .session = gate.redeem(try LoginLink.token(route: "api", signer: keyA, now: later, lifetime: .seconds(10)), now: later)
        else { Issue.record("refused after the old links expired"); return }
    }
}
