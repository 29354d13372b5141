"""Serves explanations of an MLServer iris model as a KServe explainer does.

usage: iris_explainer.py MODEL_DIR --name NAME --port PORT

KServe's explainer components answer its v1 protocol: `GET /v1/models/NAME`
(readiness) and `POST /v1/models/NAME:explain` with `{"instances": [...]}`.
This one loads MODEL_DIR/model.joblib (a scikit-learn linear classifier,
as mlserver_iris.py writes it) and explains each instance by each feature's
contribution to the predicted class's score (coefficient times value).
"""

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import joblib
import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    model = joblib.load(f"{args.model_dir}/model.joblib")
    path = f"/v1/models/{args.name}"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == path:
                self.answer(200, {"name": args.name, "ready": True})
            else:
                self.answer(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            if self.path != f"{path}:explain":
                self.answer(404, {"error": f"no route {self.path}"})
                return
            length = int(self.headers.get("content-length", "0"))
            try:
                instances = np.asarray(json.loads(self.rfile.read(length))["instances"], dtype=float)
            except (ValueError, KeyError, TypeError) as error:
                self.answer(400, {"error": f"expected instances of features: {error}"})
                return
            self.answer(200, {"explanations": [explain(model, row) for row in instances]})

        def answer(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


def explain(model, row) -> dict:
    label = model.predict([row])[0]
    index = list(model.classes_).index(label)
    return {"predicted": str(label), "contributions": (model.coef_[index] * row).tolist()}


if __name__ == "__main__":
    main()
