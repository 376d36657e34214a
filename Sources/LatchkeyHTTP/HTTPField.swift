// The HTTP/1.1 codec lives here.
