"""An iris classifier served by KServe's own ModelServer, as a KServe
predictor (or explainer) pod runs it: scikit-learn's logistic regression,
trained at start on the iris data set, answering v1 `:predict` and
`:explain` and v2 `infer` with its Open Inference metadata. `--revision`
names the revision in each v2 answer's `model_version`, so a test can tell
which revision served a call.

usage: python iris_model_server.py --model_name iris --revision 1 [ModelServer's own flags, e.g. --http_port 8080]
"""

import argparse
import json

import numpy as np
from kserve import InferOutput, InferRequest, InferResponse, Model, ModelServer, model_server
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


class IrisModel(Model):
    def __init__(self, name: str, revision: str):
        super().__init__(name)
        self.revision = revision
        self.classifier = None

    def load(self) -> bool:
        features, labels = load_iris(return_X_y=True)
        self.classifier = LogisticRegression(max_iter=1000).fit(features, labels)
        self.ready = True
        return self.ready

    def get_input_types(self):
        return [{"name": "input-0", "datatype": "FP64", "shape": [-1, 4]}]

    def get_output_types(self):
        return [{"name": "output-0", "datatype": "INT64", "shape": [-1]}]

    def predict(self, payload, headers=None):
        features = self._features(payload)
        labels = self.classifier.predict(features).astype(np.int64)
        if isinstance(payload, InferRequest):
            output = InferOutput(name="output-0", shape=list(labels.shape), datatype="INT64")
            output.set_data_from_numpy(labels, binary_data=False)
            return InferResponse(response_id=payload.id or "", model_name=self.name, model_version=self.revision, infer_outputs=[output])
        return {"predictions": labels.tolist()}

    def explain(self, payload, headers=None):
        # Each feature's share of the predicted class's score: its coefficient times its value.
        features = self._features(payload)
        labels = self.classifier.predict(features)
        shares = self.classifier.coef_[labels] * features
        return {"explanations": [{"predicted": int(label), "contributions": row.tolist()} for label, row in zip(labels, shares)]}

    @staticmethod
    def _features(payload):
        if isinstance(payload, InferRequest):
            return np.asarray(payload.inputs[0].as_numpy(), dtype=np.float64).reshape(-1, 4)
        # A v1 body sent without a JSON content type arrives undecoded.
        if isinstance(payload, (bytes, str)):
            payload = json.loads(payload)
        return np.asarray(payload["instances"], dtype=np.float64).reshape(-1, 4)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(parents=[model_server.parser])
    parser.add_argument("--revision", default="1")
    args, _ = parser.parse_known_args()
    model = IrisModel(args.model_name, args.revision)
    model.load()
    ModelServer().start([model])
