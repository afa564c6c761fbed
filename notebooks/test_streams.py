"""Tests of streams.py (run by notebooks/check and .ci/repro/24-*.sh;
plain Python, no Jupyter needed): what a notebook shows must not depend on
how the kernel chunked its output."""

import json
import pathlib
import unittest

import streams

HERE = pathlib.Path(__file__).resolve().parent


def stream(name, text):
    return {"output_type": "stream", "name": name, "text": text}


def chunked(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def rechunk(nb, size):
    """nb with every stream output split into chunks of size characters,
    as a kernel flushing at other moments would have sent it."""
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        outs = []
        for o in cell.get("outputs", []):
            if o["output_type"] != "stream":
                outs.append(o)
                continue
            text = "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
            outs += [stream(o["name"], t) for t in chunked(text, size)]
        if "outputs" in cell:
            cell["outputs"] = outs
    return nb


class MergeStreams(unittest.TestCase):
    def test_consecutive_chunks_of_one_stream_join(self):
        outs = [stream("stdout", "a"), stream("stdout", "b\n"), stream("stdout", ["c", "d\n"])]
        self.assertEqual(streams.merge_streams(outs), [stream("stdout", "ab\ncd\n")])

    def test_other_outputs_and_streams_stay_apart(self):
        fig = {"output_type": "display_data", "data": {"text/plain": "<Figure>"}, "metadata": {}}
        outs = [stream("stdout", "a"), stream("stderr", "w"), stream("stdout", "b"), fig, stream("stdout", "c")]
        self.assertEqual(streams.merge_streams(outs), outs)

    def test_carriage_return_overwrites_as_a_terminal_does(self):
        outs = [stream("stdout", "10%\r"), stream("stdout", "50%\r100%\ndone\n")]
        self.assertEqual(streams.merge_streams(outs), [stream("stdout", "100%\ndone\n")])

    def test_input_is_not_modified(self):
        outs = [stream("stdout", "a"), stream("stdout", "b")]
        streams.merge_streams(outs)
        self.assertEqual(outs, [stream("stdout", "a"), stream("stdout", "b")])

    def test_empty(self):
        self.assertEqual(streams.merge_streams([]), [])


class Texts(unittest.TestCase):
    def test_committed_notebooks_read_alike_however_chunked(self):
        paths = sorted(HERE.glob("[0-9]*.ipynb"))
        self.assertTrue(paths, "no notebooks found")
        for path in paths:
            nb = json.loads(path.read_text())
            want = streams.texts(nb)
            for size in (1, 7, 64):
                with self.subTest(notebook=path.name, chunk=size):
                    self.assertEqual(streams.texts(rechunk(nb, size)), want)

    def test_a_changed_output_still_differs(self):
        nb = {"cells": [{"cell_type": "code", "outputs": [stream("stdout", "p50 12.5 ms\n")]}]}
        other = {"cells": [{"cell_type": "code", "outputs": [stream("stdout", "p50 12.6 ms\n")]}]}
        self.assertNotEqual(streams.texts(nb), streams.texts(other))


if __name__ == "__main__":
    unittest.main()
