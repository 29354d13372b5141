"""Trains an iris classifier and adds it to an MLServer model repository.

usage: mlserver_iris.py REPOSITORY --name NAME --version VERSION [--signature]

Writes REPOSITORY/NAME/model.joblib and REPOSITORY/NAME/model-settings.json
(runtime mlserver_sklearn.SKLearnModel, the given name and version; with
--signature, the inputs and outputs its metadata then declares). The
server's own settings.json (ports) is the caller's. The data set is the copy
that ships inside scikit-learn: nothing is downloaded. Prints a JSON summary
as the last line on stdout.
"""

import argparse
import json
import os

import joblib
import numpy as np
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repository")
    parser.add_argument("--name", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--signature", action="store_true")
    args = parser.parse_args()

    iris = load_iris()
    # Species names as labels, so that a prediction reads "setosa", not 0.
    labels = np.asarray(iris.target_names)[iris.target]
    model = LogisticRegression(max_iter=1000).fit(iris.data, labels)

    model_dir = os.path.join(args.repository, args.name)
    os.makedirs(model_dir, exist_ok=True)
    joblib.dump(model, os.path.join(model_dir, "model.joblib"))
    settings = {
        "name": args.name,
        "implementation": "mlserver_sklearn.SKLearnModel",
        "parameters": {"uri": "./model.joblib", "version": args.version},
    }
    if args.signature:
        # What `GET /v2/models/NAME` then answers: four features, one label per row.
        settings["inputs"] = [{"name": "input-0", "datatype": "FP32", "shape": [-1, 4]}]
        settings["outputs"] = [{"name": "predict", "datatype": "BYTES", "shape": [-1, 1]}]
    write_json(os.path.join(model_dir, "model-settings.json"), settings)
    sample = iris.data[0].tolist()
    print(
        json.dumps(
            {
                "name": args.name,
                "version": args.version,
                "feature_names": list(iris.feature_names),
                "sample": sample,
                "sample_prediction": str(model.predict([sample])[0]),
            }
        )
    )


def write_json(path: str, value: object) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)


if __name__ == "__main__":
    main()
