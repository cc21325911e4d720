#!/usr/bin/env python3
"""Self-test of the video reference (video_ref.py; TAP on stdout).

Each check compares with numbers worked out here by hand from spec §5.3/§5.4, not with the code under test:
HF's sampler on a 23.976 fps clip and on a rounding tie (numpy's half-to-even, 4.5 -> 4), the clamps to
min_frames / max_frames / the source length, the pair times with the last frame repeated, the stamp texts
(Python rounds the double, so 0.25 -> "0.2" and 0.35 -> "0.3"; the .x5 case from index / fps against
presentation times), the constant-rate rule (a millisecond clock passes, a late frame does not), and a clip made with ffmpeg whose frame
times, rate and displayed size (rotation metadata) are known from how it was made.
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tap, ensure_numpy  # noqa: E402

ensure_numpy()
import video_ref as R  # noqa: E402

tap = Tap()

# 93 frames at 30000/1001 fps: int(93 / 29.97 * 2) = 6; linspace(0, 92, 6) = 0, 18.4, 36.8, 55.2, 73.6, 92
tap.ok(R.sample_indices(93, 30000 / 1001) == [0, 18, 37, 55, 74, 92], "sampler: 93 frames at 29.97 fps")
# n = int(10 / 10 * 3) = 3; linspace(0, 9, 3) = 0, 4.5, 9 -> 4.5 rounds to even
tap.ok(R.sample_indices(10, 10, fps=3, min_frames=1) == [0, 4, 9], "sampler: the 4.5 tie rounds to 4")
# a 1-second clip at 25 fps gives int(2) = 2 frames, raised to min_frames 4: linspace(0, 24, 4) = 0, 8, 16, 24
tap.ok(R.sample_indices(25, 25) == [0, 8, 16, 24], "sampler: min_frames 4")
# 2 hours at 1 fps: int(7200 * 2) = 14400 -> max_frames 768, first 0, last 7199
idx = R.sample_indices(7200, 1)
tap.ok(len(idx) == 768 and idx[0] == 0 and idx[-1] == 7199, "sampler: max_frames 768")
tap.ok(R.sample_indices(3, 30) == [0, 1, 2], "sampler: never more frames than the source has")
tap.ok(R.group_times([0.0, 1.0, 2.0]) == [0.5, 2.0], "pairs: an odd count repeats its last frame")
tap.ok([f"<{t:.1f} seconds>" for t in (0.25, 0.35, 12.95)] == ["<0.2 seconds>", "<0.3 seconds>", "<12.9 seconds>"],
       "stamps: Python's .1f rounds the binary value")
# transformers' pair time for frames 0 and 3 at 10 fps: (0/10 + 3/10) / 2, just below 0.15; from times
# 0.1 * 3 = 0.30000000000000004 the mean is just above
tap.ok([f"<{t:.1f} seconds>" for t in R.group_times([0 / 10, 3 / 10]) + R.group_times([0.0, 0.1 * 3])] ==
       ["<0.1 seconds>", "<0.2 seconds>"], "stamps: the .x5 case goes by how the double is computed")
# a millisecond clock at 29.97 fps (frame k at round(k * 1001 / 30)) ms is within half a period of k / fps;
# frame 5 of a 10 fps stream shown 0.06 s late (over half of 0.1) is not
tap.ok(R.constant_rate([round(k * 1001 / 30) / 1000 for k in range(300)], 30000 / 1001),
       "constant rate: a millisecond time base at 29.97 fps")
tap.ok(not R.constant_rate([k / 10 + (0.06 if k == 5 else 0) for k in range(10)], 10),
       "variable rate: a frame later than half a period")

if not shutil.which("ffmpeg") or not shutil.which("ffprobe"):
    tap.skip("ffmpeg/ffprobe missing", "probe of a clip made here")
else:
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.mp4"), os.path.join(d, "b.mp4")
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25:duration=2",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", a], check=True, stdin=subprocess.DEVNULL)
        subprocess.run(["ffmpeg", "-v", "error", "-i", a, "-c", "copy", "-metadata:s:v:0", "rotate=90", b],
                       check=True, stdin=subprocess.DEVNULL)
        sec, fps, w, h = R.probe(a)
        tap.ok(len(sec) == 50 and fps == 25 and abs(sec[49] - 49 / 25) < 1e-9 and (w, h) == (96, 64),
               "probe: 50 frames, 25 fps, frame 49 at 1.96 s, 96x64")
        tap.ok(R.probe(b)[2:] == (64, 96), "probe: rotation metadata shows the clip as 64x96")

sys.exit(tap.done())
