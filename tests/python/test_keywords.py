"""The keywords of save() and plan() are spelled in several places (the bindings' argument
lists, the type stubs, the docstrings, docs/python.md): they must agree, so that what help()
and an editor show is what the functions take."""
import ast
import os
import unittest

import onnx_repack
from support import TempDirTest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUBS = os.path.join(ROOT, "python", "onnx_repack", "__init__.pyi")


def stub_keywords(function):
    """The keyword-only parameters the type stubs give `function`, with a value of their type
    (True for a bool, else an object no keyword takes)."""
    with open(STUBS) as f:
        tree = ast.parse(f.read())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    return {a.arg: True if ast.unparse(a.annotation) == "bool" else object()
            for a in node.args.kwonlyargs}


class Keywords(TempDirTest):
    def accepts(self, function, keyword, value):
        """Whether `function` takes `keyword` (a wrong value or a missing model is a refusal
        of another kind; an unknown keyword is pybind11's TypeError)."""
        missing = os.path.join(self.dir, "missing.onnx")
        args = (missing, os.path.join(self.dir, "out", "m.onnx")) if function == "save" else (missing,)
        try:
            getattr(onnx_repack, function)(*args, **{keyword: value})
        except TypeError as error:
            return "incompatible function arguments" not in str(error)
        except Exception:  # noqa: BLE001 (any refusal but an unknown keyword)
            return True
        return True

    def test_stubs_docstrings_and_bindings_agree(self):
        for function in ("save", "plan"):
            keywords = stub_keywords(function)
            self.assertGreater(len(keywords), 10, function)
            # plan() documents its own keywords and refers to save()'s for the layout ones.
            doc = getattr(onnx_repack, function).__doc__ + onnx_repack.save.__doc__
            for keyword, value in keywords.items():
                with self.subTest(function=function, keyword=keyword):
                    self.assertTrue(self.accepts(function, keyword, value), "the binding refuses it")
                    self.assertIn(keyword, doc)
            self.assertFalse(self.accepts(function, "no_such_keyword", True))

    def test_the_guide_names_every_save_keyword(self):
        with open(os.path.join(ROOT, "docs", "python.md")) as f:
            guide = f.read()
        for keyword in stub_keywords("save"):
            with self.subTest(keyword=keyword):
                self.assertTrue(f"`{keyword}`" in guide, f"docs/python.md lacks `{keyword}`")


if __name__ == "__main__":
    unittest.main()
