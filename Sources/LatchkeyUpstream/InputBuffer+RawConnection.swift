import LatchkeyLoop

/// A raw upstream connection's reads (`PooledConnection.input`): the buffer is taken from
/// the upstream client's pool at the first read of an exchange and goes back when the
/// connection idles in the pool, so that a parked connection holds none.
extension InputBuffer {
    /// Reads from `connection` into the free space: the count read, 0 when the peer closed,
    /// nil when nothing is ready. `filled`: the read took all the space it had, so more may
    /// wait in the connection. A buffer the held bytes fill is doubled first: the response
    /// decoder's limits bound the head that needs it.
    mutating func read(from connection: RawConnection) throws(SystemError) -> (count: Int?, filled: Bool) {
        if isFull { _ = grow(upTo: .max) }
        let space = writableSpace()
        let count = try connection.receive(into: space)
        if let count { didWrite(count) }
        return (count, count == space.count)
    }
}
