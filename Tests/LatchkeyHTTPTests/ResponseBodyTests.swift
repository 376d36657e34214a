import LatchkeyHTTP
import Testing

@Suite struct ResponseBodyTests {
    @Test(arguments: [
        ("GET", 200, true), ("HEAD", 200, false), ("GET", 204, false), ("GET", 304, false),
        ("GET", 100, false), ("GET", 101, false), ("POST", 201, true), ("GET", 404, true),
        ("CONNECT", 200, false), ("CONNECT", 407, true), ("head", 200, true),
    ])
    func bodyRules(method: String, status: Int, carries: Bool) {
        #expect(responseCarriesBody(requestMethod: method, status: status) == carries)
    }
}

@Suite struct ContentLengthRuleTests {
    @Test(arguments: [
        ("GET", 204, true), ("GET", 100, true), ("GET", 103, true), ("CONNECT", 200, true),
        ("GET", 304, false), ("HEAD", 200, false), ("GET", 200, false), ("CONNECT", 407, false),
    ])
    func forbiddenFor1xx204AndConnect(method: String, status: Int, forbidden: Bool) {
        #expect(responseForbidsContentLength(requestMethod: method, status: status) == forbidden)
    }
}
