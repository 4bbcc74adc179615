"""An independent reader of TensorBoard event files, for maso's tests: checks the TFRecord framing
and both masked CRC32C checksums of every record (CRC32C computed bit by bit from its definition),
decodes each tensorflow.Event with a hand-written protobuf decoder, and prints the events as JSON.
Usage: read_tfevents.py <event file>...   Uses only the standard library."""

import json
import struct
import sys


def crc32c(data):
    # CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial and final XOR 0xFFFFFFFF
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0
    while pos < len(buf):
        if len(buf) - pos < 12:
            raise ValueError(f"{path}: truncated record header at byte {pos}")
        header = buf[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", buf[pos + 8 : pos + 12])
        if length_crc != masked(crc32c(header)):
            raise ValueError(f"{path}: bad length CRC at byte {pos}")
        data = buf[pos + 12 : pos + 12 + length]
        if len(data) != length or len(buf) < pos + 16 + length:
            raise ValueError(f"{path}: truncated record at byte {pos}")
        (data_crc,) = struct.unpack("<I", buf[pos + 12 + length : pos + 16 + length])
        if data_crc != masked(crc32c(data)):
            raise ValueError(f"{path}: bad data CRC at byte {pos}")
        yield data
        pos += 16 + length


def varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def fields(buf):
    """(field number, wire type, value) of a protobuf message; value is int, bytes or raw fixed bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos : pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unexpected wire type {wire}")
        if pos > len(buf):
            raise ValueError("field runs past the message")
        yield number, wire, value


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def event(data):
    # tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto
    out = {"values": []}
    for number, wire, value in fields(data):
        if number == 1 and wire == 1:
            out["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            out["step"] = signed64(value)
        elif number == 3 and wire == 2:
            out["file_version"] = value.decode("utf8")
        elif number == 5 and wire == 2:
            for vn, vw, v in fields(value):
                if vn != 1 or vw != 2:
                    raise ValueError(f"unexpected Summary field {vn}")
                item = {}
                for n, w, x in fields(v):
                    if n == 1 and w == 2:
                        item["tag"] = x.decode("utf8")
                    elif n == 2 and w == 5:
                        item["simple_value"] = struct.unpack("<f", x)[0]
                    else:
                        raise ValueError(f"unexpected Summary.Value field {n}")
                out["values"].append(item)
        elif number == 7 and wire == 2:
            for n, w, x in fields(value):
                if n == 1 and w == 0:
                    out["session_log_status"] = x
        else:
            raise ValueError(f"unexpected Event field {number} (wire type {wire})")
    return out


if __name__ == "__main__":
    events = []
    for path in sys.argv[1:]:
        events.extend(event(r) for r in records(path))
    result = {"events": events}
    try:
        # when TensorBoard itself is installed, its loader must read the same scalars
        from tensorboard.backend.event_processing import event_accumulator

        scalars = {}
        for path in sys.argv[1:]:
            acc = event_accumulator.EventAccumulator(path, size_guidance={event_accumulator.SCALARS: 0})
            acc.Reload()
            for tag in acc.Tags()["scalars"]:
                scalars.setdefault(tag, []).extend([s.step, s.value] for s in acc.Scalars(tag))
        result["tensorboard"] = scalars
    except ImportError:
        pass
    print(json.dumps(result))
