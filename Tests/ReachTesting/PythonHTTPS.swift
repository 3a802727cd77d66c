/// The python3 lines that serve a `BaseHTTPRequestHandler` class over HTTPS on `host` (127.0.0.1
/// unless told), on a port the kernel picks: the
/// certificate chain and key are the script's `argv[1]` and `argv[2]`; it prints `port N` once it
/// listens and serves in a thread, so the script's own lines after it run on.
enum PythonHTTPS {
    static func serve(_ handler: String, host: String = "127.0.0.1") -> String {
        """
        s = http.server.ThreadingHTTPServer(('\(host)', 0), \(handler))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        s.socket = context.wrap_socket(s.socket, server_side=True)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        print('port', s.server_address[1], flush=True)
        """
    }
}
