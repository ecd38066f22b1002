"""What the adapters of this directory share: a wrapper in front of a system under test that
passes each request line on to it as a child process and each of its answers back, one at a
time, changed as the adapter misbehaves."""
import subprocess
import sys


def relay(command, request_line=lambda line: line, answer_line=lambda request, answer: answer):
    """Runs `command` as a child; for each request line on stdin, sends it `request_line(line)`
    and writes `answer_line(line, answer)` of its answer to stdout. Stops at the first request
    the child leaves unanswered; returns the child's exit code."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        child.stdin.write(request_line(line))
        child.stdin.flush()
        answer = child.stdout.readline()
        if not answer:
            break
        sys.stdout.write(answer_line(line, answer))
        sys.stdout.flush()
    child.stdin.close()
    return child.wait()
