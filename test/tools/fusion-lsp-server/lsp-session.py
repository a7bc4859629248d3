# fusion-lsp-server over stdin/stdout as an editor drives it: initialize,
# open a document whose third line fails the fusion verifier, and expect a
# diagnostic on that line with the verifier's message; hover over a fusion
# op names it; a valid document gets no diagnostics.
#
# RUN: %fusion_python %s %fusion_obj_root/bin/fusion-lsp-server

import json
import subprocess
import sys
import threading

server = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)


def send(message):
    body = json.dumps(dict(jsonrpc="2.0", **message)).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()


def receive():
    """The next message from the server (headers, then the JSON body)."""
    length = None
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit("FAIL: the server closed its output")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(server.stdout.read(length))


def wait_for(predicate):
    while True:
        message = receive()
        if predicate(message):
            return message


# A hung server fails the test instead of hanging it.
timer = threading.Timer(60, server.kill)
timer.start()

send(dict(id=1, method="initialize", params=dict(processId=None, rootUri=None, capabilities={})))
wait_for(lambda m: m.get("id") == 1)
send(dict(method="initialized", params={}))

bad = "\n".join([
    "func.func @bad(%x: tensor<8xf32>, %y: tensor<8xbf16>) -> tensor<8xf32> {",
    "  %0 = fusion.exp %x : tensor<8xf32>",
    "  %1 = fusion.add %0, %y : (tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>",
    "  return %1 : tensor<8xf32>",
    "}", ""])
send(dict(method="textDocument/didOpen", params=dict(textDocument=dict(
    uri="file:///tmp/bad.mlir", languageId="mlir", version=1, text=bad))))
published = wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
diagnostics = published["params"]["diagnostics"]
print(json.dumps(diagnostics, indent=1))
failures = []
if not diagnostics or diagnostics[0]["range"]["start"]["line"] != 2:
    failures.append("the verifier error is not reported on line 3")
elif "element type" not in diagnostics[0]["message"]:
    failures.append("the diagnostic does not carry the verifier's message")

good = bad.replace("tensor<8xbf16>", "tensor<8xf32>").replace("@bad", "@good")
send(dict(method="textDocument/didOpen", params=dict(textDocument=dict(
    uri="file:///tmp/good.mlir", languageId="mlir", version=1, text=good))))
published = wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
if published["params"]["diagnostics"]:
    failures.append("a valid document got diagnostics")

send(dict(id=2, method="textDocument/hover", params=dict(
    textDocument=dict(uri="file:///tmp/good.mlir"), position=dict(line=1, character=10))))
hover = wait_for(lambda m: m.get("id") == 2)
print(json.dumps(hover, indent=1))
if "fusion.exp" not in json.dumps(hover.get("result")):
    failures.append("hover over fusion.exp does not name the op")

send(dict(id=3, method="shutdown"))
wait_for(lambda m: m.get("id") == 3)
send(dict(method="exit"))
server.stdin.close()
server.wait(timeout=30)
timer.cancel()

for failure in failures:
    print("FAIL:", failure)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
