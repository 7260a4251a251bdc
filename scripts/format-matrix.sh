#!/usr/bin/env bash
# Generates the format matrix: one frame-coded source (every frame carries its index as the
# frame code of tests/common/code.rs) written in many codecs and containers with the ffmpeg CLI,
# for the tests that prove frame identity on every format (tests/decode/format_matrix.rs) and for
# anyone who wants to try vidprep on awkward files.
#
#   scripts/format-matrix.sh OUT_DIR [NAME...]     # all variants, or only the named ones
#
# Each variant is one line of VARIANTS below: `name | extension | ffmpeg output options | post`.
# The options apply to `ffmpeg -i master.mkv` (320x240, 25 fps, 100 frames, a 440 Hz tone);
# `post` is an optional step after encoding: `rotate=DEG` (display matrix by a stream-copy
# remux), `damage` (overwrite a few middle packets with garbage), `unreadable` (zero 100 kB at
# 70 %: the demuxer reports invalid data there and ffmpeg stops reading). Adding a format is one
# line. The damaged H.264 variant is encoded with one x264 thread: x264's output depends on
# its thread count (one per core and a half by default), so the garbage would land on other
# frames on another machine.
# Existing outputs are kept (delete OUT_DIR to regenerate); `OUT_DIR/list.txt` names them all.
set -euo pipefail

out=${1:?usage: format-matrix.sh OUT_DIR [NAME...]}
shift
only=" $* "
mkdir -p "$out"

# name | ext | ffmpeg options (after -i master) | post
VARIANTS=$(cat <<'EOF'
h264_mp4        | mp4  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:min-keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p |
h264_aac_mp4    | mp4  | -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p -c:a aac |
h264_mkv        | mkv  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p |
h264_ts         | ts   | -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p -c:a aac |
h264_annexb     | h264 | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p |
h264_avi        | avi  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3:b-pyramid=normal -pix_fmt yuv420p |
h264_mov        | mov  | -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 -pix_fmt yuv420p -c:a pcm_s16le |
hevc_mp4        | mp4  | -an -c:v libx265 -preset ultrafast -x265-params log-level=error:keyint=24:bframes=3 -tag:v hvc1 |
hevc_annexb     | hevc | -an -c:v libx265 -preset ultrafast -x265-params log-level=error:keyint=24:bframes=3 |
vp9_webm        | webm | -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 24 -c:a libopus |
av1_mkv         | mkv  | -an -c:v libaom-av1 -strict -2 -cpu-used 8 -usage realtime -g 24 |
mpeg4_avi_bf    | avi  | -an -c:v mpeg4 -vtag DX50 -bf 2 -q:v 3 -g 24 |
xvid_avi_packed | avi  | -an -c:v libxvid -vtag DX50 -bf 2 -q:v 3 -g 24 |
mpeg4_mp4_bf    | mp4  | -an -c:v mpeg4 -bf 2 -q:v 3 -g 24 |
mpeg2_m2v       | m2v  | -an -c:v mpeg2video -g 12 -bf 2 -q:v 3 |
mpeg1_m1v       | m1v  | -an -c:v mpeg1video -g 12 -bf 2 -q:v 3 |
mpeg2_ps        | mpg  | -c:v mpeg2video -g 12 -bf 2 -q:v 3 -c:a mp2 |
mpeg2_ts        | ts   | -c:v mpeg2video -g 12 -bf 2 -q:v 3 -c:a mp2 |
mpeg2_vob       | vob  | -c:v mpeg2video -g 12 -bf 2 -q:v 3 -c:a mp2 -f vob |
mjpeg_avi       | avi  | -an -c:v mjpeg -q:v 3 -pix_fmt yuvj420p |
prores_mov      | mov  | -c:v prores_ks -profile:v 0 -c:a pcm_s16le |
ffv1_mkv        | mkv  | -c:v ffv1 -c:a flac |
theora_ogv      | ogv  | -an -c:v libtheora -q:v 7 -g 24 |
y4m             | y4m  | -an -pix_fmt yuv420p |
vfr_freeze_mp4  | mp4  | -an -vf setpts='if(lt(N\,40)\,N\,N+50)/25/TB' -fps_mode passthrough -video_track_timescale 1000 -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 |
vfr_mkv         | mkv  | -an -vf setpts='(N+floor(N/3)*0.5)/25/TB' -fps_mode passthrough -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 |
start_10s_mp4   | mp4  | -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=3 -c:a aac -output_ts_offset 10 |
audio_first_mkv | mkv  | -filter_complex '[0:v]setpts=PTS+0.5/TB[v]' -map '[v]' -map 0:a -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 -c:a aac |
late_avi        | avi  | -an -vf setpts=PTS+1/25/TB -fps_mode passthrough -c:v mpeg4 -q:v 3 -g 24 |
sar_64_45_mp4   | mp4  | -an -vf setsar=64/45 -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0 |
rot90_mp4       | mp4  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 | rotate=90
rot180_mp4      | mp4  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 | rotate=180
rot270_mov      | mov  | -an -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 | rotate=270
odd_size_mkv    | mkv  | -an -vf crop=319:239:0:0 -c:v mpeg4 -q:v 3 -g 24 -bf 1 |
one_frame_mp4   | mp4  | -an -frames:v 1 -c:v libx264 -preset veryfast |
h263_3gp        | 3gp  | -vf scale=352:288 -c:v h263 -q:v 3 -g 24 -ar 8000 -ac 1 -c:a aac -b:a 12k |
damaged_ogv     | ogv  | -an -c:v libtheora -q:v 7 -g 24 | damage
damaged_h264_ts | ts   | -an -threads 1 -c:v libx264 -preset veryfast -x264-params keyint=24:scenecut=0:bframes=2 | damage
unreadable_ogv  | ogv  | -an -c:v libtheora -q:v 7 -g 24 | unreadable
EOF
)

master="$out/master.mkv"
if [ ! -s "$master" ]; then
    # The frame code: an 8x3 grid of 16 px cells (markers, 14 bits of the index, a check nibble).
    b=16
    check='mod(mod(n,16)+3*mod(floor(n/16),16)+5*mod(floor(n/256),16)+7*mod(floor(n/4096),4)+9,16)'
    roles=("W K W K d13 d12 d11 d10" "K d9 d8 d7 d6 d5 d4 d3" "W d2 d1 d0 k3 k2 k1 k0")
    filter="drawbox=x=0:y=0:w=$((8 * b)):h=$((3 * b)):color=black:t=fill"
    for r in 0 1 2; do
        c=0
        for role in ${roles[$r]}; do
            box="drawbox=x=$((c * b)):y=$((r * b)):w=$b:h=$b:color=white:t=fill"
            case $role in
            K) box="" ;;
            W) ;;
            d*) box="$box:enable='mod(floor(n/$((1 << ${role#d}))),2)'" ;;
            k*) box="$box:enable='mod(floor($check/$((1 << ${role#k}))),2)'" ;;
            esac
            [ -n "$box" ] && filter="$filter,$box"
            c=$((c + 1))
        done
    done
    ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 \
        -f lavfi -i sine=frequency=440:sample_rate=48000 -t 4 \
        -vf "$filter" -c:v ffv1 -c:a pcm_s16le "$master.tmp.mkv"
    mv "$master.tmp.mkv" "$master"
fi

# Overwrites `count` bytes at a few points in the middle of a file with deterministic garbage.
damage() {
    local file=$1 size
    size=$(stat -c %s "$file")
    for at in 45 52 60; do
        head -c 400 /dev/zero | tr '\0' '\377' |
            dd of="$file" bs=1 seek=$((size * at / 100)) conv=notrunc status=none
    done
}

fps_mode=0
help=$(ffmpeg -hide_banner -h full 2>/dev/null || true)
if [[ $help == *-fps_mode* ]]; then fps_mode=1; fi

: >"$out/list.txt.tmp"
while IFS='|' read -r name ext opts post; do
    name=$(echo "$name" | xargs)
    ext=$(echo "$ext" | xargs)
    post=$(echo "$post" | xargs)
    [ -n "$name" ] || continue
    if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then continue; fi
    file="$out/$name.$ext"
    echo "$name.$ext" >>"$out/list.txt.tmp"
    [ -s "$file" ] && continue
    tmp="$out/.$name.tmp.$ext"
    # shellcheck disable=SC2086 # the options are words on purpose
    # FFmpeg before 5.1 (Debian 11's 4.3) has -vsync where newer ones have -fps_mode.
    [ "$fps_mode" = 1 ] || opts=${opts//-fps_mode passthrough/-vsync passthrough}
    eval "set -- $opts"
    ffmpeg -nostdin -v error -y -i "$master" "$@" "$tmp"
    case $post in
    rotate=*)
        ffmpeg -nostdin -v error -y -i "$tmp" -c copy -metadata:s:v:0 "rotate=${post#rotate=}" "$tmp.$ext"
        mv "$tmp.$ext" "$tmp"
        ;;
    damage) damage "$tmp" ;;
    unreadable)
        size=$(stat -c %s "$tmp")
        head -c 100000 /dev/zero | dd of="$tmp" bs=1 seek=$((size * 70 / 100)) conv=notrunc status=none
        ;;
    "") ;;
    *) echo "unknown post step '$post' for $name" >&2; exit 2 ;;
    esac
    mv "$tmp" "$file"
done <<<"$VARIANTS"
mv "$out/list.txt.tmp" "$out/list.txt"
