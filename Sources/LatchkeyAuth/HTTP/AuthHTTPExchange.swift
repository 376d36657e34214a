import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyUpstream

/// One request in flight on the client's loop: collects the response whole and reports
/// its outcome exactly once, whichever comes first of the transfer's end, the total
/// timeout, the body limit, cancellation or shutdown. Loop-confined.
final class AuthHTTPExchange: UpstreamTransferDelegate {
    typealias Outcome = Result<AuthHTTPResponse, AuthHTTPError>

    private unowned let loop: EventLoop
    private let maxResponseBytes: Int
    private var transfer: UpstreamTransfer?
    private var deadline: LoopTimer?
    private var status = 0
    private var fields = HTTPFields()
    private var body: [UInt8] = []
    /// Nil once the outcome is reported.
    private var report: ((Outcome) -> Void)?

    init(loop: EventLoop, maxResponseBytes: Int, report: @escaping (Outcome) -> Void) {
        self.loop = loop
        self.maxResponseBytes = maxResponseBytes
        self.report = report
    }

    /// Starts the transfer with the whole body queued, and the total timeout.
    func start(_ request: AuthHTTPRequest, on client: UpstreamClient) {
        let deadline = ClosureTimer { [weak self] in self?.end(.totalTimeout(request.timeout)) }
        self.deadline = deadline
        loop.arm(deadline, after: request.timeout)
        let upstream = UpstreamRequest(
            method: request.method, url: request.url, fields: request.fields,
            body: request.upstreamBody, options: request.options, cookieJar: request.cookieJar
        )
        let transfer = client.start(upstream, delegate: self)
        self.transfer = transfer
        request.body.withUnsafeBytes { transfer.sendBody($0) }
        transfer.finishBody()
    }

    /// Stops the transfer (its connection is closed) and reports `error`.
    func end(_ error: AuthHTTPError) {
        transfer?.cancel()
        finish(.failure(error))
    }

    private func finish(_ outcome: Outcome) {
        guard let report else { return }
        self.report = nil
        transfer = nil
        if let deadline { loop.disarm(deadline) }
        report(outcome)
    }

    // MARK: UpstreamTransferDelegate

    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: consuming HTTPFields,
                                declared: DeclaredFraming) {
        self.status = status
        self.fields = fields
    }

    func upstreamDidReceiveBody(_ transfer: UpstreamTransfer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= maxResponseBytes else {
            end(.tooLarge(limit: maxResponseBytes))
            return true
        }
        body.append(contentsOf: bytes)
        return true
    }

    func upstreamWantsBody(_ transfer: UpstreamTransfer) {
        // The whole body was queued and finished at the start: nothing more to give.
    }

    func upstreamDidFinish(_ transfer: UpstreamTransfer, error: UpstreamError?) {
        if let error {
            finish(.failure(AuthHTTPError(error)))
        } else {
            finish(.success(AuthHTTPResponse(status: status, fields: fields, body: body)))
        }
    }
}
