import LatchkeyHTTP
import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

/// TLS verification, a private CA, mutual TLS and HTTP/2 against a real nginx.
@Suite(.serialized, .enabled(if: TLSUpstream.available, "needs nginx and openssl"))
struct UpstreamTLSTests {
    @Test func unknownCAIsATLSError() async throws {
        let upstream = try TLSUpstream()
        defer { upstream.stop() }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(upstream.baseURL + "/", fields: ["Host": "localhost"]))
        await harness.shutDown()
        #expect(outcome.error?.code == .tls)
        #expect(outcome.error?.isTimeout == false)
    }

    @Test func privateCAOverHTTP1AndHTTP2() async throws {
        let upstream = try TLSUpstream()
        defer { upstream.stop() }
        let harness = try UpstreamHarness()
        // HTTP/2 first: curl reuses an HTTP/1.1 connection for a request that merely offers
        // HTTP/2, but never an HTTP/2 connection for a request that wants HTTP/1.1.
        let http2 = await harness.perform(
            request(upstream.baseURL + "/", fields: ["Host": "localhost"], options: UpstreamOptions(caFile: upstream.caFile, http2: true)))
        let http1 = await harness.perform(
            request(upstream.baseURL + "/", fields: ["Host": "localhost"], options: UpstreamOptions(caFile: upstream.caFile)))
        // Back to the system CAs on a reused handle: the private CA must not linger.
        let system = await harness.perform(request(upstream.baseURL + "/", fields: ["Host": "localhost"]))
        await harness.shutDown()
        #expect(http1.error == nil)
        #expect(http1.bodyText.hasPrefix("proto=HTTP/1.1 client=NONE"))
        #expect(http2.error == nil)
        #expect(http2.status == 200)
        #expect(http2.bodyText.hasPrefix("proto=HTTP/2.0"))
        #expect(system.error?.code == .tls)
    }

    @Test func clientCertificateForMutualTLS() async throws {
        let upstream = try TLSUpstream()
        defer { upstream.stop() }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(
            caFile: upstream.caFile, clientCertificateFile: upstream.clientCertificate, clientKeyFile: upstream.clientKey)
        let outcome = await harness.perform(request(upstream.baseURL + "/", fields: ["Host": "localhost"], options: options))
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.bodyText.contains("client=SUCCESS"))
        #expect(outcome.bodyText.contains("CN=latchkey-client"))
    }

    @Test(arguments: [false, true])
    func backpressureOverTLS(http2: Bool) async throws {
        let upstream = try TLSUpstream()
        defer { upstream.stop() }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(caFile: upstream.caFile, http2: http2)
        let outcome = await harness.perform(
            request(upstream.baseURL + "/big", fields: ["Host": "localhost"], options: options),
            setUp: { recorder, loop in
                var calls = 0
                recorder.onBody = { transfer, _ in
                    calls += 1
                    guard calls % 4 == 0 else { return true }
                    after(.milliseconds(1), on: loop) { transfer.resumeReceiving() }
                    return false
                }
            }
        )
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.pauseCount > 5)
        #expect(outcome.body.count == TLSUpstream.bigSize)
        #expect(outcome.body == patternBody(TLSUpstream.bigSize))
    }

    /// Latchkey's own HTTP/1.1 over curl_easy_send/recv: a client certificate, keep-alive
    /// through the pool, and a large body paused and resumed with decrypted bytes held.
    @Test func latchkeysOwnHTTP1OverMutualTLS() async throws {
        let upstream = try TLSUpstream()
        defer { upstream.stop() }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(
            caFile: upstream.caFile, clientCertificateFile: upstream.clientCertificate, clientKeyFile: upstream.clientKey)
        let first = await harness.perform(request(upstream.baseURL + "/", fields: ["Host": "localhost"], options: options), on: .http1)
        let big = await harness.perform(
            request(upstream.baseURL + "/big", fields: ["Host": "localhost"], options: options), on: .http1,
            setUp: { recorder, loop in
                var calls = 0
                recorder.onBody = { transfer, _ in
                    calls += 1
                    guard calls % 4 == 0 else { return true }
                    loop.runAfterEvents { transfer.resumeReceiving() }
                    return false
                }
            }
        )
        let idle = await harness.onLoop { client, _ in client.pool.idleCount }
        await harness.shutDown()
        #expect(first.error == nil)
        #expect(first.bodyText.hasPrefix("proto=HTTP/1.1 client=SUCCESS"))
        #expect(big.error == nil)
        #expect(big.pauseCount > 5)
        #expect(big.body == patternBody(TLSUpstream.bigSize))
        #expect(idle == 1, "both exchanges went over one connection")
    }
}
