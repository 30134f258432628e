"""Run INSIDE a sandbox (never imported by dgm): plain HTTP on the container's loopback,
forwarded byte for byte to the job's gateway socket.

    python3 -I llm_forward_script.py PORT SOCKET READY_FILE

Standard SDKs (openai, anthropic, litellm) speak HTTP to a host and port, not to a unix
socket; this gives them `http://127.0.0.1:PORT`. It listens on 127.0.0.1 only and connects
only to SOCKET, so the container gains no network it did not have: the same gateway, the
same job binding, every call still counted and budgeted there. Standard library only: it
runs on every task image's python3.
"""

import socket
import sys
import threading

CHUNK = 65536


def pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:  # half-close: the other direction may still be answering
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main() -> None:
    port, socket_path, ready_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    with open(ready_file, "w") as ready:
        ready.write(str(port))
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, socket_path), daemon=True).start()


if __name__ == "__main__":
    main()
