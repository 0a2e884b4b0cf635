"""The TLS side of the separate PostgreSQL server the deploy tests start (tests/deploy/server.py).

The PostgreSQL that ``pgserver`` ships (the one with pgvector here) is built without OpenSSL,
so it cannot answer TLS itself. This program does what ``ssl = on`` and a ``hostssl`` line
would: it listens on TCP, speaks PostgreSQL's TLS negotiation (the client's SSLRequest is
answered ``S``, then the TLS handshake, with the server certificate given), refuses a
client that does not ask for TLS with the server's own error, and passes the decrypted
bytes to the server's Unix socket. Authentication (SCRAM passwords) is the server's.

    python -m tests.deploy.tls_front PORT SOCKET CERT KEY

It prints one line per connection (``tls`` or ``refused``) so the tests can count them.
"""

from __future__ import annotations

import asyncio
import ssl
import struct
import sys

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CHUNK = 65536


def error_response(message: str) -> bytes:
    """A FATAL ErrorResponse as PostgreSQL sends one (28000: invalid authorization)."""
    fields = b"".join(
        kind + value.encode() + b"\0"
        for kind, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", "28000"), (b"M", message))
    )
    body = fields + b"\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


class Front:
    def __init__(self, socket_path: str, context: ssl.SSLContext) -> None:
        self.socket_path = socket_path
        self.context = context

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            code = await self.request_code(reader)
            if code == GSSENC_REQUEST:  # No GSSAPI encryption here: the client goes on.
                writer.write(b"N")
                await writer.drain()
                code = await self.request_code(reader)
            if code != SSL_REQUEST:
                print("refused", flush=True)
                writer.write(error_response("this server accepts TLS connections only"))
                await writer.drain()
                writer.close()
                return
            writer.write(b"S")
            await writer.drain()
            await writer.start_tls(self.context)
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(self.socket_path)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, OSError):
            writer.close()
            return
        print("tls", flush=True)
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    @staticmethod
    async def request_code(reader: asyncio.StreamReader) -> int:
        length, code = struct.unpack("!ii", await reader.readexactly(8))
        if code in (SSL_REQUEST, GSSENC_REQUEST):
            return int(code)
        # A StartupMessage (a client that did not ask for TLS): its code is the protocol.
        await reader.readexactly(max(0, length - 8))
        return 0


async def serve(port: int, socket_path: str, cert: str, key: str) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    front = Front(socket_path, context)
    server = await asyncio.start_server(front.handle, "127.0.0.1", port)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    port, socket_path, cert, key = sys.argv[1:5]
    asyncio.run(serve(int(port), socket_path, cert, key))
