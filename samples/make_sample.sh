#!/bin/sh
# samples/make_sample.sh — makes samples/shapes.mp4, the clip the README's quick start describes:
# 12 seconds, 426x240, 25 fps, H.264, no audio, made only from FFmpeg's synthetic lavfi sources
# (solid colours, the testsrc2 pattern) and drawtext captions, so it has no third-party content
# (licence: samples/README.md). Three 4-second scenes, each with a caption saying what happens:
#   0-4 s   a red square slides from left to right across a sky-blue background
#   4-8 s   a yellow square falls from the top to the bottom of a dark green background
#   8-12 s  FFmpeg's moving test pattern
# Usage: samples/make_sample.sh [OUT]   (default samples/shapes.mp4; needs ffmpeg with libx264,
# libfreetype and the DejaVu fonts: Debian's ffmpeg and fonts-dejavu-core)
set -eu
out=${1:-$(dirname "$0")/shapes.mp4}
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
[ -f "$font" ] || { echo "make_sample.sh: $font is missing (apt-get install fonts-dejavu-core)" >&2; exit 1; }
caption="fontfile=$font:fontsize=18:fontcolor=white:box=1:boxcolor=black@0.6:boxborderw=6:x=(w-text_w)/2:y=12"
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "color=c=skyblue:s=426x240:r=25:d=4" \
  -f lavfi -i "color=c=red:s=60x60:r=25:d=4" \
  -f lavfi -i "color=c=darkgreen:s=426x240:r=25:d=4" \
  -f lavfi -i "color=c=yellow:s=50x50:r=25:d=4" \
  -f lavfi -i "testsrc2=s=426x240:r=25:d=4" \
  -filter_complex "\
[0][1]overlay=x='-60+t*122':y=150,drawtext=$caption:text='A red square slides to the right'[a];\
[2][3]overlay=x=188:y='-50+t*72',drawtext=$caption:text='A yellow square falls down'[b];\
[4]drawtext=$caption:text='A test pattern'[c];\
[a][b][c]concat=n=3:v=1:a=0,format=yuv420p[v]" \
  -map "[v]" -c:v libx264 -preset veryslow -crf 30 -g 50 -movflags +faststart \
  -metadata title="seer sample: shapes" -metadata comment="made by samples/make_sample.sh; CC0-1.0" \
  -fflags +bitexact -flags:v +bitexact "$out"
echo "make_sample.sh: wrote $out ($(wc -c < "$out") bytes)"
