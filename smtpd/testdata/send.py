"""Sends one message with Python's smtplib and prints what the server answered, as JSON.

argv[1] is a JSON object: port, from, to (list), file (the message), and optionally
starttls (bool: upgrade without verifying the certificate), mail_options (list).
"""
import json
import smtplib
import ssl
import sys

args = json.loads(sys.argv[1])
out = {"rcpt": []}
s = smtplib.SMTP("127.0.0.1", args["port"], timeout=30)
s.ehlo("client.test")
out["ehlo"] = sorted(s.esmtp_features.keys())
if args.get("starttls"):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    code, _ = s.starttls(context=ctx)
    out["starttls"] = code
    s.ehlo("client.test")
    out["ehlo_tls"] = sorted(s.esmtp_features.keys())
code, msg = s.mail(args["from"], args.get("mail_options", []))
out["mail"] = code
accepted = 0
for rcpt in args["to"]:
    code, msg = s.rcpt(rcpt)
    out["rcpt"].append(code)
    accepted += code == 250
if accepted:
    with open(args["file"], "rb") as f:
        body = f.read()
    try:
        code, msg = s.data(body)
    except smtplib.SMTPDataError as e:
        code, msg = e.smtp_code, e.smtp_error
    out["data"] = code
    out["data_text"] = msg.decode("utf-8", "replace")
try:
    s.quit()
except smtplib.SMTPServerDisconnected:
    pass
print(json.dumps(out))
