import CCurlShims

// C callbacks: capture-free, the transfer through CURLOPT_HEADERDATA/WRITEDATA/READDATA.

let transferHeaderCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlHeader(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let transferWriteCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlWrite(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let transferReadCallback: curl_read_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlRead(into: UnsafeMutableRawPointer(buffer!), capacity: size * count)
}
