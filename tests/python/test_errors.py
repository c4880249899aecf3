# SPDX-License-Identifier: MIT
"""Bad arguments raise clear exceptions, recording or not; control-call
failures raise pipeprof.Error with the library's reason."""

import pytest

import pipeprof


def check(exc, match, fn, *args, **kw):
    with pytest.raises(exc, match=match):
        fn(*args, **kw)


@pytest.mark.parametrize("recording", [False, True])
def test_recording_calls_check_their_arguments(session, recording):
    if recording:
        session()
    check(TypeError, "pipeprof.zone: name must be a str, not int",
          pipeprof.zone, 3)
    check(ValueError, "must not contain NUL", pipeprof.zone, "a\0b")
    check(TypeError, "counter: value must be an int or a float, not str",
          pipeprof.counter, "x", "3")
    check(ValueError, r"counter: value must be in", pipeprof.counter, "x",
          2 ** 70)
    check(TypeError, "missing required argument 'value'",
          pipeprof.counter, "x")
    check(TypeError, "unexpected keyword argument 'val'",
          pipeprof.counter, "x", val=3)
    check(TypeError, "counter_add: delta must be an int, not float",
          pipeprof.counter_add, "x", 1.5)
    check(ValueError, r"request_begin: id must be in 0..2\*\*64-1",
          pipeprof.request_begin, -1)
    check(TypeError, "request_end: id must be an int, not str",
          pipeprof.request_end, "7")
    check(ValueError, "request_tokens: n must be in 0..4294967295",
          pipeprof.request_tokens, 1, -2)
    check(ValueError, "batch: size must be in", pipeprof.batch, -1)
    check(TypeError, "flow_begin: name must be a str",
          pipeprof.flow_begin, None, 1)
    check(TypeError, "mark: name must be a str", pipeprof.mark, b"x")
    check(TypeError, "frame_mark: name must be a str",
          pipeprof.frame_mark, 1)
    check(TypeError, "range_start: name must be a str",
          pipeprof.range_start, 1)
    check(TypeError, "span: name must be a str", pipeprof.span, 1)
    q = pipeprof.queue_declare("errq")
    check(ValueError, "why must be pipeprof.FULL", q.wait_begin, 5)
    check(ValueError, "why must be pipeprof.FULL", q.waiting, 0)
    check(ValueError, "push: item_id must be in", q.push, -5)
    check(TypeError, "decorates one callable", pipeprof.zone("z"), 1)
    check(TypeError, "profile: name must be a str", pipeprof.profile,
          lambda: 0, name=3)
    # numbers that are not int or float but convert
    pipeprof.counter("ok", True)


def test_control_calls_raise_clear_errors(tmp_path):
    check(ValueError, "mode must be one of flight, stats, trace, not 'x'",
          pipeprof.start, mode="x")
    check(ValueError, "sample_hz must be in 0..1000",
          pipeprof.start, sample_hz=5000)
    check(TypeError, "flush_ms must be an int", pipeprof.start,
          flush_ms="10")
    bad = tmp_path / "no such dir" / "t.pptrace"
    with pytest.raises(pipeprof.Error) as e:
        pipeprof.start(out=bad)
    assert "input/output error (PP_EIO)" in str(e.value)
    assert str(bad) in str(e.value)
    assert not pipeprof.running()
    # a value the library refuses is a bad argument: ValueError with its
    # words
    check(ValueError, "buffer_kib 100: expected a power of two",
          pipeprof.start, out=tmp_path / "x.pptrace", buffer_kib=100)
    assert pipeprof.start(out=tmp_path / "t.pptrace",
                          install_signals=False)
    try:
        check(pipeprof.Error, "call pipeprof.stop\\(\\) first",
              pipeprof.start)
        check(pipeprof.Error, "flight_dump: not available in this mode",
              pipeprof.flight_dump)
    finally:
        pipeprof.stop()
    check(pipeprof.Error, "profiler not running", pipeprof.flight_dump)
    assert pipeprof.stop() is None


def test_flight_dump(tmp_path):
    from conftest import summary_json, zones_by_name
    assert pipeprof.start(mode="flight", out=tmp_path / "f.pptrace",
                          install_signals=False)
    try:
        with pipeprof.zone("kept"):
            pass
        dump = tmp_path / "dump.pptrace"
        pipeprof.flight_dump(dump)
    finally:
        pipeprof.stop()
    assert zones_by_name(summary_json(dump))["kept"]["count"] == 1
